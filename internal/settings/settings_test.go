package settings

import "testing"

func TestInt(t *testing.T) {
	for _, c := range []struct {
		v, d, want int
		err        string
	}{
		{0, 256, 256, ""},
		{64, 256, 64, ""},
		{-1, 256, -1, "ratio: batch size -1, want >= 0"},
	} {
		v := c.v
		err := Int("ratio", &v, c.d, "batch size")
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		if v != c.want || msg != c.err {
			t.Errorf("Int(%d, default %d): %d, %q; want %d, %q", c.v, c.d, v, msg, c.want, c.err)
		}
	}
}
