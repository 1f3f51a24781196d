// Package filelock gives baton's writers of one file (state.yaml, the
// ledger) turns: an exclusive OS lock, blocking until it is free, across
// goroutines and processes and on every platform (flock on Unix,
// LockFileEx on Windows, through gofrs/flock).
//
// The lock is taken on a lock file of its own, outside the user's tree, so
// that a workspace's git status never shows one: under the user's cache
// folder, <cache>/baton/locks/<sha256 of the file's path>.lock, where
// <cache> is os.UserCacheDir (~/.cache on Linux, ~/Library/Caches on
// darwin, %LocalAppData% on Windows). Without a cache folder (no HOME, as
// under some service managers) it is a folder of the user's own under the
// temporary folder. The path hashed is absolute with symlinks resolved, so
// every way of naming one file finds one lock; it is lower-cased on
// Windows and darwin, whose file systems usually ignore case.
//
// Lock files stay in place: removing one would let two writers lock two
// different files. They are empty, one per file ever locked. The lock dies
// with its process, so a crash never leaves a file locked. Processes only
// take turns when they agree on the cache folder: the same user, with the
// same HOME (or XDG_CACHE_HOME).
package filelock

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"github.com/gofrs/flock"
)

// Lock takes the exclusive lock for path (see Path), creating the lock
// file and its folder if need be, and returns the function that releases
// it. path itself need not exist; its folder is created, as it was when
// the lock file lived there, since the caller is about to write the file
// (the ledger's first entry creates specs/, say).
func Lock(path string) (unlock func() error, err error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	lp, err := Path(path)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	// The lock file is opened by path with O_CREATE: a symlink planted in
	// its place would make baton create files wherever it points.
	if fi, err := os.Lstat(lp); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return nil, fmt.Errorf("lock %s: %s is a symlink; baton keeps its lock files as regular files", path, lp)
	}
	// A Flock of its own per call: one Flock locked twice returns at once,
	// which would let two goroutines in.
	fl := flock.New(lp)
	for {
		err = fl.Lock()
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() error {
		if err := fl.Unlock(); err != nil {
			return fmt.Errorf("unlock %s: %w", path, err)
		}
		return nil
	}, nil
}

// Path returns the lock file for path, creating the folder it lives in.
func Path(path string) (string, error) {
	key, err := canonical(path)
	if err != nil {
		return "", err
	}
	dir, err := lockDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(key))
	return filepath.Join(dir, hex.EncodeToString(sum[:])+".lock"), nil
}

// canonical is path as every process names it: absolute, with symlinks
// resolved as far as the path exists (a file about to be created has no
// target yet, its folder may not either).
func canonical(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	var rest []string
	p := abs
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			p = filepath.Join(append([]string{real}, rest...)...)
			break
		}
		parent := filepath.Dir(p)
		if !errors.Is(err, fs.ErrNotExist) || parent == p {
			// Unresolvable for another reason (a loop, no permission): the
			// cleaned absolute path still names the file the same way each
			// time.
			p = abs
			break
		}
		rest = append([]string{filepath.Base(p)}, rest...)
		p = parent
	}
	if runtime.GOOS == "windows" || runtime.GOOS == "darwin" {
		p = strings.ToLower(p)
	}
	return p, nil
}

// lockDir returns the folder lock files live in, creating it.
func lockDir() (string, error) {
	if cache, err := os.UserCacheDir(); err == nil {
		dir := filepath.Join(cache, "baton", "locks")
		if err := os.MkdirAll(dir, 0o700); err == nil {
			return dir, nil
		}
	}
	// The temporary folder is shared with other users on Unix: the folder
	// must be this user's own, or another user could swap lock files.
	dir := filepath.Join(os.TempDir(), "baton-locks-"+userTag())
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", fmt.Errorf("lock folder: %w", err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return "", fmt.Errorf("lock folder: %w", err)
	}
	if !fi.IsDir() || !ownedByMe(fi) {
		return "", fmt.Errorf("lock folder %s is not a folder of this user's own; remove it or set HOME", dir)
	}
	return dir, nil
}

// userTag tells users apart in the shared temporary folder.
func userTag() string {
	if uid := os.Getuid(); uid >= 0 {
		return strconv.Itoa(uid)
	}
	// Windows has no uid; its temporary folder is per user anyway.
	return "user"
}
