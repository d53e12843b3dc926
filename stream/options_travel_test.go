package stream

import (
	"reflect"
	"strings"
	"testing"
)

// fill sets every exported field reachable from v that can travel (not
// tagged json:"-") to a value other than its zero value, and returns the
// paths of the fields it set.
func fill(t *testing.T, v reflect.Value, path string, set *[]string) {
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() && f.Type.Kind() == reflect.Func {
				continue // a test hook, not an option
			}
			if !f.IsExported() {
				t.Errorf("%s.%s: an unexported option cannot travel to a worker", path, f.Name)
				continue
			}
			if strings.Split(f.Tag.Get("json"), ",")[0] == "-" {
				continue
			}
			fill(t, v.Field(i), path+"."+f.Name, set)
		}
		return
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(3 + len(*set)))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(5 + len(*set)))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(0.125 * float64(1+len(*set)))
	case reflect.String:
		v.SetString(path)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(t, s.Index(i), path+"[]", set)
		}
		v.Set(s)
	case reflect.Pointer:
		p := reflect.New(v.Type().Elem())
		fill(t, p.Elem(), path, set)
		v.Set(p)
	default:
		t.Errorf("%s: an option of kind %s: say how it travels (or tag it json:\"-\")", path, v.Kind())
		return
	}
	*set = append(*set, path)
}

// TestOptionsTravel: every option of a stream's configuration, ope.Options
// with every learner's settings included, survives the trip to a worker
// (encodeConfig, decodeConfig: the path MarshalBinary and MarshalJSON
// take). A field added to the options travels without a hand copy; one
// that cannot (a func, an interface) must be tagged json:"-" or this test
// fails.
func TestOptionsTravel(t *testing.T) {
	var c Config
	var set []string
	fill(t, reflect.ValueOf(&c).Elem(), "Config", &set)
	if len(set) < 20 {
		t.Fatalf("only %d options set: %q", len(set), set)
	}
	b, err := encodeConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := decodeConfig(b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Errorf("options changed on the way to a worker:\n got %+v\nwant %+v", got, c)
	}
}
