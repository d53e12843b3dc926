package results

import (
	"encoding/json"
	"math"
	"testing"
)

func TestFloatJSON(t *testing.T) {
	cases := []struct {
		v    float64
		json string
	}{
		{1.5, `1.5`},
		{0, `0`},
		{1e-300, `1e-300`},
		{math.Inf(1), `"+Inf"`},
		{math.Inf(-1), `"-Inf"`},
		{math.NaN(), `"NaN"`},
	}
	for i, c := range cases {
		b, err := json.Marshal(Float(c.v))
		if err != nil || string(b) != c.json {
			t.Errorf("case %d: marshal %v = %s, %v; want %s", i, c.v, b, err, c.json)
		}
		var f Float
		if err := json.Unmarshal(b, &f); err != nil {
			t.Errorf("case %d: unmarshal %s: %v", i, b, err)
		}
		if got := float64(f); got != c.v && !(math.IsNaN(got) && math.IsNaN(c.v)) {
			t.Errorf("case %d: round trip %v, want %v", i, got, c.v)
		}
	}
	var f Float
	if err := json.Unmarshal([]byte(`"abc"`), &f); err == nil {
		t.Error(`"abc" decoded as a Float`)
	}
}
