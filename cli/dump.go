// `kraftwatch dump` prints what a KRaft metadata log holds, the Go counterpart of kafka-metadata-shell (brokers with racks, topics with ids,
// partitions and replicas) and, with --records, of kafka-dump-log
// --cluster-metadata-decoder (every record with its offset).
//
// PATH is a metadata log directory (…/__cluster_metadata-0: the newest usable
// snapshot and the log after it, as the observer loads it), one snapshot
// (.checkpoint) or one segment (.log, replayed from an empty image, so changes to
// partitions created in earlier segments are reported as errors and skipped).
// Files are only read.
package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/kraftwatch/kraftwatch/image"
	"github.com/kraftwatch/kraftwatch/internal/metadata"
	"github.com/kraftwatch/kraftwatch/internal/recordbatch"
	"github.com/kraftwatch/kraftwatch/observer"
)

const usage = `usage: kraftwatch dump [--records] [--json] PATH
       kraftwatch dump [--json] --bootstrap-controller HOST:PORT[,...]

PATH is a KRaft metadata log directory (.../__cluster_metadata-0), a snapshot
(.checkpoint) or a log segment (.log). Prints the brokers with their racks and the
topics with their ids, partitions and replicas; with --records, every record with
its offset first. Files are only read. A segment that ends inside a batch (a write in
progress, or torn at a crash) is shown up to its last whole batch, with a warning; a
corrupt batch is an error (exit 1). With --bootstrap-controller the metadata log
is fetched from the controller quorum's leader instead (its snapshot and the log up
to the high watermark), as kraftwatch run does in network mode.
`

// Dump runs `kraftwatch dump` with args (without "dump") and returns the exit code:
// 0 on success, 1 when PATH cannot be read cleanly (the message says where), 2 for
// bad usage.
func Dump(args []string, stdout, stderr io.Writer) int { return DumpEnv(args, nil, stdout, stderr) }

// DumpEnv is Dump with --bootstrap-controller's TLS and SASL settings read from
// environ (KRAFTWATCH_CONTROLLER_*, as kraftwatch run reads them).
func DumpEnv(args, environ []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dump", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, usage) }
	records := fs.Bool("records", false, "print every record with its offset")
	asJSON := fs.Bool("json", false, "print JSON (one object; with --records, one record per line first)")
	controllers := fs.String("bootstrap-controller", "", controllerFlagHelp)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if err := oneSource(fs.NArg(), *controllers); err != nil {
		fmt.Fprintf(stderr, "kraftwatch dump: %v\n", err)
		fs.Usage()
		return 2
	}
	if *controllers != "" && *records {
		fmt.Fprintln(stderr, "kraftwatch dump: --records prints files; it does not go with --bootstrap-controller")
		return 2
	}
	d := &dumper{out: stdout, errw: stderr, records: *records, json: *asJSON}
	if *controllers != "" {
		l, source, err := loadFromControllers(*controllers, environ, stderr)
		if err == nil {
			err = d.summary(*controllers, source, l.Image)
		}
		if err != nil {
			fmt.Fprintf(stderr, "kraftwatch dump: %v\n", err)
			return 1
		}
		return 0
	}
	if err := d.run(fs.Arg(0)); err != nil {
		fmt.Fprintf(stderr, "kraftwatch dump: %v\n", err)
		return 1
	}
	return 0
}

type dumper struct {
	out, errw     io.Writer
	records, json bool
	warnings      int
}

func (d *dumper) warn(format string, args ...any) {
	d.warnings++
	fmt.Fprintf(d.errw, "kraftwatch dump: warning: "+format+"\n", args...)
}

func (d *dumper) run(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return d.dir(path)
	}
	switch {
	case strings.HasSuffix(path, ".checkpoint"), strings.HasSuffix(path, ".log"):
		return d.file(path)
	}
	return fmt.Errorf("%s: not a metadata log dir, .checkpoint or .log file", path)
}

// dir loads a directory as the observer does: a __cluster_metadata-0 directory, or
// Kafka's metadata.log.dir holding one (as `kraftwatch run` accepts). A torn tail of the
// newest segment is left out with a warning, with or without --records.
func (d *dumper) dir(path string) error {
	if sub := filepath.Join(path, "__cluster_metadata-0"); isDir(sub) {
		path = sub
	}
	logger := slog.New(slog.NewTextHandler(d.errw, &slog.HandlerOptions{Level: slog.LevelWarn}))
	l, err := observer.Load(path, logger)
	if err != nil {
		return err
	}
	if n := len(l.Segments); n > 0 && !d.records {
		if err := observer.ReadFile(l.Segments[n-1], func(observer.FileRecord) error { return nil }); torn(l.Segments[n-1], err) {
			d.warnTorn(err)
		}
	}
	if d.records {
		if l.Snapshot != "" {
			if err := d.printFile(l.Snapshot, -1); err != nil {
				return err
			}
		}
		for _, seg := range l.Segments {
			if err := d.printFile(seg, l.SnapshotEnd); err != nil {
				return err
			}
		}
	}
	source := "log replayed from offset 0"
	if l.Snapshot != "" {
		source = "snapshot " + filepath.Base(l.Snapshot) + " and the log after it"
	}
	return d.summary(path, source, l.Image)
}

// file replays one file into an empty image.
func (d *dumper) file(path string) error {
	if d.records {
		if err := d.printFile(path, -1); err != nil {
			return err
		}
	}
	delta := image.NewDelta(image.Empty)
	prov := image.Empty.Provenance()
	err := observer.ReadFile(path, func(r observer.FileRecord) error {
		prov = image.Provenance{Offset: r.Offset, Epoch: r.Epoch, Timestamp: r.Timestamp}
		if r.Record == nil {
			return nil
		}
		if err := delta.Replay(r.Record); err != nil {
			d.warn("offset %d: %v", r.Offset, err)
		}
		return nil
	})
	if err != nil {
		if !torn(path, err) {
			return err
		}
		if !d.records { // with --records, printFile has warned
			d.warnTorn(err)
		}
	}
	im, _ := delta.Apply(prov)
	source := "segment replayed from an empty image"
	if strings.HasSuffix(path, ".checkpoint") {
		source = "snapshot"
	}
	return d.summary(path, source, im)
}

// printFile prints the records of one file, those at offsets >= from (all when from
// is negative).
func (d *dumper) printFile(path string, from int64) error {
	if !d.json {
		fmt.Fprintf(d.out, "# %s\n", filepath.Base(path))
	}
	err := observer.ReadFile(path, func(r observer.FileRecord) error {
		if from >= 0 && r.Offset < from {
			return nil
		}
		if r.Err != nil {
			d.warn("%s offset %d: %v", filepath.Base(path), r.Offset, r.Err)
		}
		if d.json {
			return d.recordJSON(path, r)
		}
		switch {
		case r.Err != nil:
			fmt.Fprintf(d.out, "%d error %v\n", r.Offset, r.Err)
		case r.Control != nil:
			fmt.Fprintf(d.out, "%d control %s %s\n", r.Offset, r.Control.ControlType(), controlText(r.Control))
		default:
			fmt.Fprintf(d.out, "%d v%d %s\n", r.Offset, r.Version, metadata.FormatText(r.Record, nil))
		}
		return nil
	})
	if torn(path, err) {
		d.warnTorn(err)
		return nil
	}
	return err
}

// torn reports whether err is a segment ending inside a batch: a write in progress, or
// a torn write at a crash (Kafka truncates it on recovery). dump shows the records
// before it with a warning and exits 0, with or without --records, for a file or a
// directory. A snapshot that ends early is an error: snapshots are written whole.
func torn(path string, err error) bool {
	return errors.Is(err, recordbatch.ErrTruncated) && strings.HasSuffix(path, ".log")
}

func (d *dumper) warnTorn(err error) { d.warn("%v; left out, the records before it are shown", err) }

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

func controlText(c any) string {
	b, _ := json.Marshal(generic(c))
	return string(b)
}

func (d *dumper) recordJSON(path string, r observer.FileRecord) error {
	v := map[string]any{"file": filepath.Base(path), "offset": r.Offset, "epoch": r.Epoch, "timestamp": r.Timestamp}
	switch {
	case r.Err != nil:
		v["error"] = r.Err.Error()
	case r.Control != nil:
		v["control"] = r.Control.ControlType().String()
		v["data"] = generic(r.Control)
	default:
		v["type"] = r.Record.Type().EnumName()
		v["version"] = r.Version
		v["data"] = generic(r.Record)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(d.out, "%s\n", b)
	return err
}
