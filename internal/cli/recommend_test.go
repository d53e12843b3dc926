package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The JSON's recommended: one object per target policy with the
// contract's fields; the chosen row's numbers; the table and the report
// say it.
func TestEstimateRecommended(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "taxi.csv")
	if _, errOut, code := run(t, "sample", "-n", "40", "-T", "100", "--target-probs", "--out", data); code != ExitOK {
		t.Fatal(errOut)
	}
	out, errOut, code := run(t, "estimate", "--data", data, "--estimators", "wis-stepwise,fqe,dr", "--bootstrap", "40", "--json")
	if code != ExitOK {
		t.Fatal(errOut)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &raw); err != nil {
		t.Fatal(err)
	}
	var recs []map[string]any
	if err := json.Unmarshal(raw["recommended"], &recs); err != nil || len(recs) != 1 {
		t.Fatalf("recommended %s: %v", raw["recommended"], err)
	}
	for _, k := range []string{"policy", "estimator", "estimate", "ci_low", "ci_high", "why"} {
		if _, ok := recs[0][k]; !ok {
			t.Errorf("recommended lacks %q: %v", k, recs[0])
		}
	}
	var rep struct {
		Estimates []struct {
			Estimator string   `json:"estimator"`
			Estimate  *float64 `json:"estimate"`
			CILow     *float64 `json:"ci_low"`
		} `json:"estimates"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	name, _ := recs[0]["estimator"].(string)
	found := false
	for _, r := range rep.Estimates {
		if r.Estimator == name {
			found = true
			if *r.Estimate != recs[0]["estimate"].(float64) || *r.CILow != recs[0]["ci_low"].(float64) {
				t.Errorf("recommended %v, row %s %v [%v ...]", recs[0], name, *r.Estimate, *r.CILow)
			}
		}
	}
	if !found {
		t.Fatalf("recommended %q is not a row", name)
	}
	html := filepath.Join(dir, "r.html")
	table, errOut, code := run(t, "estimate", "--data", data, "--estimators", "wis-stepwise,fqe,dr", "--bootstrap", "40", "--report", html)
	if code != ExitOK {
		t.Fatal(errOut)
	}
	if !strings.Contains(table, "recommended: "+name) {
		t.Errorf("the table does not say recommended %s:\n%s", name, table)
	}
	b, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if i, j := strings.Index(s, "Recommended estimate"), strings.Index(s, "<table"); i < 0 || j >= 0 && i > j {
		t.Errorf("the report does not put the recommendation first (at %d, first table at %d)", i, j)
	}
}
