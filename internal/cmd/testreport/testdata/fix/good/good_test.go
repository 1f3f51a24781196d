package good

import "testing"

func TestOne(t *testing.T) { t.Log("fine") }

func TestTable(t *testing.T) {
	for _, n := range []string{"a", "b"} {
		t.Run(n, func(t *testing.T) {})
	}
}
