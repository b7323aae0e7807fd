// Command kraftwatch is the KRaft metadata sidecar (see shared DESIGN.md).
//
// For now it only runs the `dump` subcommand; the sidecar itself is wired here later.
package main

import (
	"fmt"
	"os"

	"github.com/kraftwatch/kraftwatch/internal/dump"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "dump" {
		os.Exit(dump.Main(os.Args[2:], os.Stdout, os.Stderr))
	}
	fmt.Fprintln(os.Stderr, "usage: kraftwatch dump [--records] [--json] PATH")
	os.Exit(2)
}
