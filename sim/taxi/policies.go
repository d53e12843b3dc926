package taxi

import (
	"bytes"
	"embed"
	"fmt"
	"sync"

	"github.com/ihope-ope/ihope/policy"
)

// The authors' tabular Taxi policies (state,p0..p5, 2000 rows each).
//
//go:embed policies/*.csv
var policyFiles embed.FS

// Names of the default policies of ihope's Taxi experiments: the target
// pi19 and the behavior pi18 (which an experiment may mix with the target by
// policy.Mixture to vary the policy mismatch).
const (
	DefaultTarget   = "pi19"
	DefaultBehavior = "pi18"
)

var policyNames = []string{"pi14", "pi15", "pi16", "pi17", "pi18", "pi19"}

// PolicyNames returns the names of the embedded policies, "pi14" ... "pi19".
func PolicyNames() []string { return append([]string(nil), policyNames...) }

type parsed struct {
	p   *policy.Tabular
	err error
}

var loaders = func() map[string]func() parsed {
	m := make(map[string]func() parsed, len(policyNames))
	for _, name := range policyNames {
		m[name] = sync.OnceValue(func() parsed {
			p, err := load(name)
			return parsed{p, err}
		})
	}
	return m
}()

// Policy returns the embedded policy with the given name ("pi14" ...
// "pi19"). The file is parsed on the first call; later calls return the
// same read-only table.
func Policy(name string) (*policy.Tabular, error) {
	f, ok := loaders[name]
	if !ok {
		return nil, fmt.Errorf("taxi: unknown policy %q (have %v)", name, policyNames)
	}
	r := f()
	return r.p, r.err
}

func load(name string) (*policy.Tabular, error) {
	b, err := policyFiles.ReadFile("policies/" + name + ".csv")
	if err != nil {
		return nil, fmt.Errorf("taxi: policy %s: %w", name, err)
	}
	p, err := policy.ReadCSV(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("taxi: policy %s: %w", name, err)
	}
	if p.NumStates() != NumStates || p.NumActions() != NumActions {
		return nil, fmt.Errorf("taxi: policy %s is %dx%d, want %dx%d", name, p.NumStates(), p.NumActions(), NumStates, NumActions)
	}
	return p, nil
}
