package dbosengine

import (
	"testing"

	"github.com/baton-dev/baton/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
