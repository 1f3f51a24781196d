package main

import (
	"errors"
	"io"
	"io/fs"
)

// readAllFrom reads standard input (or any reader a test supplies).
func readAllFrom(r io.Reader) ([]byte, error) {
	if r == nil {
		return nil, errors.New("no standard input")
	}
	return io.ReadAll(r)
}

// unwrapPath drops the path *fs.PathError repeats, so a message names the
// file once.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
