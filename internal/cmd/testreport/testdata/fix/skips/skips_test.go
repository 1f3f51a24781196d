package skips

import "testing"

func TestRuns(t *testing.T) {}

func TestHelperChild(t *testing.T) { t.Skip("started only by TestParent") }

func TestNeedsBrowser(t *testing.T) { t.Skip("SKIPPED, NO CHROMIUM: not on PATH") }

func TestShort(t *testing.T) {
	t.Run("inner", func(t *testing.T) { t.Skip("symlinks unavailable: not here") })
}
