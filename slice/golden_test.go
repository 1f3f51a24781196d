package slice

import (
	"testing"

	golden_ "github.com/baton-dev/baton/internal/golden"
)

func golden(t *testing.T, path, got string) { golden_.Check(t, path, got) }
