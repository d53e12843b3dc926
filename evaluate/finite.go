package evaluate

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strings"
)

// JSON has no NaN or infinity, and encoding/json refuses them, so one
// estimator overflowing (a reward of 1e308, a behavior probability of
// 1e-300) would cost the whole --json output. The contract instead: a
// number that is not finite is written as null, and its row's "error"
// says which fields were and why.

// nullNonFinite walks v (a pointer to a report) and sets every *float64
// that points to NaN or ±Inf to nil. It returns the JSON names of the
// fields it cleared, each with the value it held, in the walk's order.
// Rows (Row) are handled by their MarshalJSON, which also says
// why in their error; this catches the rest of the report.
func nullNonFinite(v reflect.Value, name string, cleared *[]string) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return
		}
		if f, ok := v.Interface().(*float64); ok {
			if !finite(*f) && v.CanSet() {
				*cleared = append(*cleared, fmt.Sprintf("%s (%v)", name, *f))
				v.Set(reflect.Zero(v.Type()))
			}
			return
		}
		nullNonFinite(v.Elem(), name, cleared)
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if tag == "-" {
				continue
			}
			if tag == "" {
				tag = f.Name
			}
			nullNonFinite(v.Field(i), tag, cleared)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			nullNonFinite(v.Index(i), fmt.Sprintf("%s[%d]", name, i), cleared)
		}
	}
}

// finite reports whether x is neither NaN nor infinite.
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// nonFiniteError is the error of a row some of whose numbers were not
// finite: which ones, their values, and the usual cause.
func nonFiniteError(fields []string) string {
	return fmt.Sprintf("not a finite number, written as null: %s (a sum overflowed float64 or divided by zero: look for rewards near ±1.8e308, behavior probabilities near 0, or weights that collapse; see the warnings)",
		strings.Join(fields, ", "))
}

// MarshalJSON writes the row with every number that is not finite as
// null, named in "error" (added to an error the row had).
func (r Row) MarshalJSON() ([]byte, error) {
	type plain Row // without this method
	var cleared []string
	ptr := func(name string, p **float64) {
		if *p != nil && !finite(**p) {
			cleared = append(cleared, fmt.Sprintf("%s (%v)", name, **p))
			*p = nil
		}
	}
	ptr("estimate", &r.Estimate)
	ptr("ci_low", &r.CILow)
	ptr("ci_high", &r.CIHigh)
	ptr("transient", &r.Transient)
	ptr("transient_se", &r.TransientSE)
	ptr("bootstrap_bias", &r.BootstrapBias)
	ptr("restart_sd", &r.RestartSD)
	ptr("se", &r.SE)
	ptr("wald_low", &r.WaldLow)
	ptr("wald_high", &r.WaldHigh)
	ptr("max_weight_share", &r.MaxWeightShare)
	// The fields that are plain numbers in the row are written from
	// pointers, which the fields below shadow (encoding/json takes the
	// shallower of two fields of one name).
	out := struct {
		plain
		ESS              *float64   `json:"ess"`
		RestartEstimates []*float64 `json:"restart_estimates,omitempty"`
		Seconds          *float64   `json:"seconds,omitempty"`
		Error            string     `json:"error,omitempty"`
	}{plain: plain(r)}
	if ess := r.ESS; finite(ess) {
		out.ESS = &ess
	} else {
		cleared = append(cleared, fmt.Sprintf("ess (%v)", ess))
	}
	for i, x := range r.RestartEstimates {
		if finite(x) {
			out.RestartEstimates = append(out.RestartEstimates, &r.RestartEstimates[i])
		} else {
			cleared = append(cleared, fmt.Sprintf("restart_estimates[%d] (%v)", i, x))
			out.RestartEstimates = append(out.RestartEstimates, nil)
		}
	}
	if s := r.Seconds; s != 0 && finite(s) {
		out.Seconds = &s
	}
	out.Error = r.Error
	if len(cleared) > 0 {
		msg := nonFiniteError(cleared)
		if out.Error != "" {
			msg = out.Error + "; " + msg
		}
		out.Error = msg
	}
	return json.Marshal(out)
}

// encodeReport writes rep as one JSON object: its rows by their
// MarshalJSON, and every other number that is not finite (the data's mean
// reward, a ranking's rho, ...) as null, named in a warning.
func encodeReport(w io.Writer, rep *Report) error {
	out := *rep
	out.Data = rep.Data
	out.Policies = slices.Clone(rep.Policies)
	if rep.Ranking != nil {
		r := *rep.Ranking
		out.Ranking = &r
	}
	var cleared []string
	for name, v := range map[string]any{"data": &out.Data, "policies": &out.Policies, "ranking": out.Ranking, "bootstrap": out.Bootstrap} {
		var c []string
		nullNonFinite(reflect.ValueOf(v), name, &c)
		for _, f := range c {
			cleared = append(cleared, name+"."+f)
		}
	}
	if len(cleared) > 0 {
		slices.Sort(cleared)
		out.Warnings = append(slices.Clone(out.Warnings), nonFiniteError(cleared))
	}
	return json.NewEncoder(w).Encode(&out)
}
