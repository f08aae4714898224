package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Dir is a Backend in a local directory: <root>/<scope>/<name>, files 0600
// in directories 0700, since blobs may be plaintext transcripts.
type Dir struct {
	root string
}

var _ Backend = (*Dir)(nil)

// NewDir returns the backend rooted at root, creating root if missing.
func NewDir(root string) (*Dir, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("content store dir %q: %w", root, err)
	}
	if err := os.MkdirAll(abs, 0o700); err != nil {
		return nil, fmt.Errorf("content store: %w", err)
	}
	return &Dir{root: abs}, nil
}

// Name is "dir:<root>".
func (d *Dir) Name() string { return "dir:" + d.root }

// Put writes a temporary file beside the target and renames it into place,
// so a reader never sees half a blob; both are synced first, because
// Temporal's history will hold a reference to the blob as soon as Put
// returns, and a blob lost in a crash after that cannot be made again.
func (d *Dir) Put(ctx context.Context, key string, data []byte) error {
	return d.place(key, data, os.Rename)
}

// place writes data to a synced temporary file beside key's path, moves
// it there with move (rename, or link where nothing may be replaced), and
// syncs the directory.
func (d *Dir) place(key string, data []byte, move func(tmp, path string) error) error {
	if err := checkKey(key); err != nil {
		return err
	}
	path := filepath.Join(d.root, filepath.FromSlash(key))
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("content store: %w", err)
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("content store: %w", err)
	}
	defer os.Remove(f.Name()) // gone after a rename; the link's other name
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = move(f.Name(), path)
	}
	if errors.Is(err, os.ErrExist) {
		return errExists
	}
	if err != nil {
		return fmt.Errorf("content store: write %s: %w", key, err)
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("content store: %w", err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("content store: sync %s: %w", dir, err)
	}
	return nil
}

// Get reads the file of key.
func (d *Dir) Get(ctx context.Context, key string) ([]byte, error) {
	if err := checkKey(key); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(filepath.Join(d.root, filepath.FromSlash(key)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w %s", ErrMissing, d.Name())
	}
	if err != nil {
		return nil, fmt.Errorf("content store: %w", err)
	}
	return data, nil
}

// ListScopes reports every directory under the root with the newest
// modification time of the files in it (the directory's own when empty).
func (d *Dir) ListScopes(ctx context.Context, fn func(scope string, newest time.Time) error) error {
	entries, err := os.ReadDir(d.root)
	if err != nil {
		return fmt.Errorf("content store: %w", err)
	}
	for _, e := range entries {
		if !e.IsDir() || checkSegment(e.Name()) != nil {
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		newest, err := d.newest(e)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted since the root was read
		}
		if err != nil {
			return err
		}
		if err := fn(e.Name(), newest); err != nil {
			return err
		}
	}
	return nil
}

// ListKeys reports every file of every scope directory, skipping a
// write's temporary file.
func (d *Dir) ListKeys(ctx context.Context, fn func(key string) error) error {
	scopes, err := os.ReadDir(d.root)
	if err != nil {
		return fmt.Errorf("content store: %w", err)
	}
	for _, sc := range scopes {
		if !sc.IsDir() || checkSegment(sc.Name()) != nil {
			continue
		}
		files, err := os.ReadDir(filepath.Join(d.root, sc.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted since the root was read
		}
		if err != nil {
			return fmt.Errorf("content store: %w", err)
		}
		for _, f := range files {
			if f.IsDir() || strings.HasPrefix(f.Name(), ".tmp-") {
				continue
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(sc.Name() + "/" + f.Name()); err != nil {
				return err
			}
		}
	}
	return nil
}

func (d *Dir) newest(scope fs.DirEntry) (time.Time, error) {
	info, err := scope.Info()
	if err != nil {
		return time.Time{}, err
	}
	files, err := os.ReadDir(filepath.Join(d.root, scope.Name()))
	if err != nil {
		return time.Time{}, err
	}
	if len(files) == 0 {
		return info.ModTime(), nil
	}
	var newest time.Time
	for _, f := range files {
		fi, err := f.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return time.Time{}, err
		}
		if fi.ModTime().After(newest) {
			newest = fi.ModTime()
		}
	}
	return newest, nil
}

// DeleteScope removes the scope's directory and everything in it.
func (d *Dir) DeleteScope(ctx context.Context, scope string) error {
	if err := checkSegment(scope); err != nil {
		return err
	}
	if err := os.RemoveAll(filepath.Join(d.root, scope)); err != nil {
		return fmt.Errorf("content store: %w", err)
	}
	return nil
}
