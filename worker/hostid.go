package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// hostIDFile is where a worker keeps the host id it made up, beside the
// tool journal in the host's state directory: the journal and the id
// belong to the same host, and survive its restarts together.
func hostIDFile(journalDir string) string {
	return filepath.Join(filepath.Dir(filepath.Clean(journalDir)), "host-id")
}

// validHostID keeps a host id usable in a task queue name and a log line.
var validHostID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// hostID is this host's identity, which names its host queue: given (the
// -host-id flag or $AGENTLOOP_HOST_ID, e.g. a StatefulSet pod's name), else
// the id kept in file, made up at random and written there on the host's
// first start. A hostname would not do: a rescheduled pod gets a new one,
// and the runs whose workspace it holds would wait on a queue nobody polls.
// from says where the id came from, for the start-up log.
func hostID(given, file string) (id, from string, err error) {
	if given != "" {
		if !validHostID.MatchString(given) {
			return "", "", fmt.Errorf("host id %q: want up to 63 letters, digits, '.', '_' or '-'", given)
		}
		return given, "given", nil
	}
	b, err := os.ReadFile(file)
	switch {
	case err == nil:
		id = strings.TrimSpace(string(b))
		if !validHostID.MatchString(id) {
			return "", "", fmt.Errorf("host id file %s holds %q, not a host id: remove it to make a new one", file, id)
		}
		return id, file, nil
	case !errors.Is(err, os.ErrNotExist):
		return "", "", fmt.Errorf("read host id: %w", err)
	}
	r := make([]byte, 6)
	if _, err := rand.Read(r); err != nil {
		return "", "", err
	}
	id = hex.EncodeToString(r)
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return "", "", fmt.Errorf("keep host id: %w", err)
	}
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, []byte(id+"\n"), 0o600); err != nil {
		return "", "", fmt.Errorf("keep host id: %w", err)
	}
	if err := os.Rename(tmp, file); err != nil {
		return "", "", fmt.Errorf("keep host id: %w", err)
	}
	return id, file + " (new)", nil
}
