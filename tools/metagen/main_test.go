package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kraftwatch/kraftwatch/bench/metagen"
	"github.com/kraftwatch/kraftwatch/observer"
)

func TestRun(t *testing.T) {
	out := t.TempDir()
	err := run([]string{"-kafka-version", "4.3.1", "-topics", "7", "-partitions", "5", "-rf", "2", "-brokers", "4",
		"-racks", "2", "-changes", "9", "-out", out})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(out, "__cluster_metadata-0")
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 2 {
		t.Fatalf("%v, %v; want a snapshot and a segment", entries, err)
	}
	l, err := observer.Load(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := metagen.ForKafka("4.3.1")
	c.Topics, c.Partitions, c.ReplicationFactor, c.Brokers, c.Racks = 7, 5, 2, 4, 2
	if err := c.Check(l.Image, 9); err != nil {
		t.Error(err)
	}

	for name, args := range map[string][]string{
		"no -out":          {"-topics", "1"},
		"stray argument":   {"-out", out, "x"},
		"unknown release":  {"-kafka-version", "3.9.0", "-out", out},
		"RF above brokers": {"-rf", "5", "-brokers", "4", "-out", out},
		"unknown order":    {"-order", "random", "-out", out},
	} {
		if err := run(args); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
