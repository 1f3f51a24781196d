package main

import (
	"errors"
	"io/fs"
)

// unwrapPath drops the path *fs.PathError repeats, so a message names the
// file once.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
