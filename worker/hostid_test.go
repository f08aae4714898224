package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A made-up host id is written once and read back on every later start; a
// given one wins and is not written; a bad one is refused.
func TestHostID(t *testing.T) {
	dir := t.TempDir()
	file := hostIDFile(filepath.Join(dir, "tool-journal"))
	if file != filepath.Join(dir, "host-id") {
		t.Fatalf("host id file %s, want it beside the journal", file)
	}
	id, from, err := hostID("", file)
	if err != nil || !validHostID.MatchString(id) || from != file+" (new)" {
		t.Fatalf("first start: %q from %q, %v", id, from, err)
	}
	again, from, err := hostID("", file)
	if err != nil || again != id || from != file {
		t.Fatalf("restart: %q from %q, %v; want %q from the file", again, from, err, id)
	}
	given, from, err := hostID("pod-3", file)
	if err != nil || given != "pod-3" || from != "given" {
		t.Fatalf("given: %q from %q, %v", given, from, err)
	}
	if b, _ := os.ReadFile(file); string(b) != id+"\n" {
		t.Fatalf("a given id replaced the kept one: %q", b)
	}
	if _, _, err := hostID("a b/c", file); err == nil {
		t.Fatal("an id with a space and a slash was taken")
	}
	if err := os.WriteFile(file, []byte("not an id!\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := hostID("", file); err == nil {
		t.Fatal("a garbled host id file was taken")
	}
}
