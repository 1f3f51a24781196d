package bad

import "testing"

func TestPasses(t *testing.T) {}

func TestFails(t *testing.T) {
	t.Log("some context")
	t.Errorf("got 2, want 3")
}

func TestSub(t *testing.T) {
	t.Run("ok", func(t *testing.T) {})
	t.Run("broken", func(t *testing.T) { t.Fatal("the subtest broke") })
}
