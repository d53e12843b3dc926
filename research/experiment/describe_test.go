package experiment

import (
	"reflect"
	"testing"

	"github.com/ihope-ope/ihope/figure/results"
)

// Describe copies every field of a panel's description: a field added to
// results.PanelOf and forgotten in Describe fails here.
func TestDescribeCopiesEveryField(t *testing.T) {
	var p Panel
	v := reflect.ValueOf(&p).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString(v.Type().Field(i).Name)
		case reflect.Bool:
			f.SetBool(true)
		case reflect.Int:
			f.SetInt(int64(i + 1))
		case reflect.Slice: // Settings, checked below
		default:
			t.Fatalf("field %s of kind %s: teach this test to set it", v.Type().Field(i).Name, f.Kind())
		}
	}
	p.Settings = []Setting{{ID: "a", X: 1, Tick: "α", Key: "k"}, {ID: "b", X: 2}}
	got := Describe([]Panel{p})
	if len(got) != 1 {
		t.Fatalf("%d panels", len(got))
	}
	d := reflect.ValueOf(got[0])
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		if name == "Settings" {
			continue
		}
		if !reflect.DeepEqual(d.FieldByName(name).Interface(), v.Field(i).Interface()) {
			t.Errorf("field %s: %v, want %v", name, d.FieldByName(name), v.Field(i))
		}
	}
	want := []results.Setting{{ID: "a", X: 1, Tick: "α"}, {ID: "b", X: 2}}
	if !reflect.DeepEqual(got[0].Settings, want) {
		t.Errorf("settings %+v, want %+v", got[0].Settings, want)
	}
}
