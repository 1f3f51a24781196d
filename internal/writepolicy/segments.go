package writepolicy

import "strings"

// eachKey calls fn with each segment of rel in Key form ("." and empty
// ones left out) until fn returns true, and reports whether it did. It
// keys each segment once and builds no joined path.
func eachKey(rel string, fn func(seg string) bool) bool {
	start := 0
	for i := 0; i <= len(rel); i++ {
		if i < len(rel) && rel[i] != '/' && rel[i] != '\\' {
			continue
		}
		if raw := rel[start:i]; raw != "" {
			if s := Segment(raw); s != "." && s != "" && fn(s) {
				return true
			}
		}
		start = i + 1
	}
	return false
}

// SegmentWriteFamily reports the family that forbids writing anything at
// or below a segment already in Key form. A walk that checks each segment
// as it reaches it has checked the whole path when it gets to the end.
func SegmentWriteFamily(seg string) (Family, bool) {
	if f, ok := familyOf(seg); ok {
		return f, true
	}
	return writeOnlyFamily(seg)
}

// SegmentReadFamily is SegmentWriteFamily for reading.
func SegmentReadFamily(seg string) (Family, bool) {
	if f, ok := familyOf(seg); ok && unreadable(f) {
		return f, true
	}
	return "", false
}

// HasExt reports whether rel ends in one of exts (lower case, with the
// dot), compared in Key form, so "LEDGER.MD" and "ledger.md." are markdown
// as the file system that opens them reads them.
func HasExt(rel string, exts ...string) bool {
	k := Key(rel)
	for _, e := range exts {
		if strings.HasSuffix(k, e) {
			return true
		}
	}
	return false
}
