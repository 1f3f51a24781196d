package chromium

import (
	"fmt"
	"image"
	"image/png"
	"os"
)

// Blankness reads a PNG and returns how many distinct colours it has and
// the share of its pixels that differ from the top-left one: a page that
// rendered nothing is one colour.
func Blankness(path string) (colours int, nonBackground float64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		return 0, 0, fmt.Errorf("screenshot %s: %w", path, err)
	}
	return count(img)
}

func count(img image.Image) (int, float64, error) {
	b := img.Bounds()
	if b.Empty() {
		return 0, 0, fmt.Errorf("screenshot is empty")
	}
	bg := img.At(b.Min.X, b.Min.Y)
	br, bgc, bb, ba := bg.RGBA()
	seen := map[[4]uint32]bool{}
	differ := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, a := img.At(x, y).RGBA()
			if len(seen) < 4096 {
				seen[[4]uint32{r, g, bl, a}] = true
			}
			if r != br || g != bgc || bl != bb || a != ba {
				differ++
			}
		}
	}
	return len(seen), float64(differ) / float64(b.Dx()*b.Dy()), nil
}
