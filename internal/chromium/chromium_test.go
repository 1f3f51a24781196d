package chromium

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDumpDOMAndScreenshot: the browser runs, builds the DOM of a page with
// inline SVG, and a screenshot of it is not one colour.
func TestDumpDOMAndScreenshot(t *testing.T) {
	bin := Require(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "p.html")
	html := `<!DOCTYPE html><html><head><meta charset="utf-8"><title>t</title></head><body>` +
		`<h1>Report</h1><svg width="300" height="60"><rect id="bar" data-tokens="42" x="10" y="10" width="200" height="30" fill="#1f5fbf"/></svg>` +
		`<script>document.body.setAttribute("data-ran", "yes")</script></body></html>`
	if err := os.WriteFile(page, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := DumpDOM(t, bin, page)
	for _, want := range []string{`id="bar"`, `data-tokens="42"`, `data-ran="yes"`} {
		if !strings.Contains(dom, want) {
			t.Errorf("DOM lacks %s:\n%s", want, dom)
		}
	}
	png := filepath.Join(dir, "p.png")
	Screenshot(t, bin, page, png, 800, 600)
	colours, share, err := Blankness(png)
	if err != nil {
		t.Fatal(err)
	}
	if colours < 3 || share < 0.01 {
		t.Errorf("screenshot looks blank: %d colours, %.3f of pixels not background", colours, share)
	}
}
