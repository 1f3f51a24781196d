// Package recordcmp compares two ask records for the tests that run one ask
// two ways (in one process, through an engine, through worker processes) and
// expect the same record: it drops what differs between any two runs of one
// ask, the record's ID, every time and the order the calls finished in.
package recordcmp

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

// Comparable decodes a record's JSON into plain values without its ID and
// times, with its calls in a fixed order (by phase, subtask, then content).
func Comparable(data []byte) (any, error) {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("record is not JSON: %w", err)
	}
	strip(v)
	if m, ok := v.(map[string]any); ok {
		if calls, ok := m["calls"].([]any); ok {
			sort.SliceStable(calls, func(i, j int) bool { return callKey(calls[i]) < callKey(calls[j]) })
		}
	}
	return v, nil
}

func strip(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if k == "id" || strings.HasSuffix(k, "_ms") || strings.HasSuffix(k, "_at") {
				delete(x, k)
				continue
			}
			strip(e)
		}
	case []any:
		for _, e := range x {
			strip(e)
		}
	}
}

// callKey orders calls by phase and subtask (subtask numbers are small
// integers from -1, zero-padded to sort as numbers), then by the rest of
// the call (a subtask's map calls, which finish in any order).
func callKey(c any) string {
	x, _ := c.(map[string]any)
	n, _ := x["subtask"].(float64)
	rest, _ := json.Marshal(x)
	return fmt.Sprintf("%v/%08d/%s", x["phase"], int(n)+1, rest)
}
