package state

import (
	"bytes"
	"errors"
)

// Update is the safe way to change a state file that others may be
// writing: it takes the lock, loads the file fresh (never a copy read
// before the lock), applies fn, saves if anything changed, and unlocks. If
// fn or any edit fails, the file on disk is untouched.
func Update(path string, fn func(*File) error) (err error) {
	unlock, err := Lock(path)
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, unlock()) }()
	f, err := Load(path)
	if err != nil {
		return err
	}
	before := f.Bytes()
	// fn's error is returned as it is: the File methods it calls already
	// name the file, and a caller's own error is the caller's to word.
	if err := fn(f); err != nil {
		return err
	}
	if bytes.Equal(before, f.Bytes()) {
		return nil
	}
	return f.Save()
}
