package cli

import (
	"fmt"
	"io"
	"net/http"
	"time"
)

// Probe runs `kraftwatch probe URL`: exit 0 when URL answers 200 within 3 s, 1 when it
// does not, 2 for bad usage. It is the health check of images without curl.
func Probe(args []string, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: kraftwatch probe URL")
		return 2
	}
	client := &http.Client{Timeout: 3 * time.Second}
	resp, err := client.Get(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "kraftwatch probe: %v\n", err)
		return 1
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "kraftwatch probe: %s: %s\n", args[0], resp.Status)
		return 1
	}
	return 0
}
