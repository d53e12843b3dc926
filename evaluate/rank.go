package evaluate

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/ihope-ope/ihope/internal/words"
	"github.com/ihope-ope/ihope/rank"
)

// Ranking is how each estimator orders the target policies, and,
// where --reference gives their values, how well; the JSON names are a
// contract.
type Ranking struct {
	Policies []string `json:"policies"`
	// Reference holds the known values, aligned with Policies (null where
	// none is known), and ReferenceOrder the order they give.
	Reference      []*float64         `json:"reference"`
	ReferenceOrder []string           `json:"reference_order,omitempty"`
	Estimators     []EstimatorRanking `json:"estimators"`
}

// EstimatorRanking is one estimator's order of the policies, best first.
type EstimatorRanking struct {
	Estimator string `json:"estimator"`
	// Order lists the policies it has an estimate for, highest first;
	// Ties marks, for each but the last, whether the next one has the
	// same estimate.
	Order  []string `json:"order"`
	Ties   []bool   `json:"-"`
	Failed []string `json:"failed,omitempty"`
	// OutOfRange lists the policies whose estimate lies outside the
	// logged rewards' range, which a normalised value cannot leave: left
	// out of the order.
	OutOfRange []string `json:"out_of_range,omitempty"`
	// Distrusted lists the policies whose row the report distrusts (its
	// own diagnostics: a biased bootstrap, failed resamples, networks
	// that disagree; or states that do not look Markov for an estimator
	// that assumes them): left out of the order too.
	Distrusted []string `json:"distrusted,omitempty"`
	// Compared counts the policies with both an estimate and a
	// reference, over which Spearman and RegretAt1 are computed (at
	// least 2). Spearman is null when the estimates or references are
	// all equal.
	Compared  int      `json:"compared,omitempty"`
	Spearman  *float64 `json:"spearman,omitempty"`
	RegretAt1 *float64 `json:"regret_at_1,omitempty"`
}

// newRanking ranks the policies of a merged report (rows of several
// policies, rep.Policies in order) by each estimator's estimates.
func newRanking(rep *Report) *Ranking {
	r := &Ranking{}
	at := map[string]int{}
	ref := make([]float64, len(rep.Policies))
	for i, p := range rep.Policies {
		r.Policies = append(r.Policies, p.Name)
		r.Reference = append(r.Reference, p.Reference)
		at[p.Name] = i
		ref[i] = math.NaN()
		if p.Reference != nil {
			ref[i] = *p.Reference
		}
	}
	r.ReferenceOrder, _ = order(r.Policies, ref)
	var names []string
	est := map[string][]float64{}
	outside, distrust := map[string][]string{}, map[string][]string{}
	lo, hi := valueRange(rep)
	for _, row := range rep.Estimates {
		v, ok := est[row.Estimator]
		if !ok {
			names = append(names, row.Estimator)
			v = make([]float64, len(r.Policies))
			for i := range v {
				v[i] = math.NaN()
			}
			est[row.Estimator] = v
		}
		switch {
		case row.Estimate != nil && outOfRange(*row.Estimate, lo, hi):
			outside[row.Estimator] = append(outside[row.Estimator], row.Policy)
		case row.Estimate != nil && rep.distrust(row) != "":
			distrust[row.Estimator] = append(distrust[row.Estimator], row.Policy)
		case row.Estimate != nil:
			v[at[row.Policy]] = *row.Estimate
		}
	}
	for _, name := range names {
		v := est[name]
		er := EstimatorRanking{Estimator: name, OutOfRange: outside[name], Distrusted: distrust[name]}
		er.Order, er.Ties = order(r.Policies, v)
		var e, t []float64
		for i, x := range v {
			switch {
			case math.IsNaN(x) && (slices.Contains(er.OutOfRange, r.Policies[i]) || slices.Contains(er.Distrusted, r.Policies[i])):
			case math.IsNaN(x):
				er.Failed = append(er.Failed, r.Policies[i])
			case !math.IsNaN(ref[i]):
				e, t = append(e, x), append(t, ref[i])
			}
		}
		if len(e) >= 2 {
			er.Compared = len(e)
			if rho := rank.Spearman(e, t); !math.IsNaN(rho) {
				er.Spearman = &rho
			}
			regret := rank.Regret(e, t, 1)
			er.RegretAt1 = &regret
		}
		r.Estimators = append(r.Estimators, er)
	}
	return r
}

// order returns the names whose values are not NaN, highest value first,
// and for each but the last whether the next one ties with it.
func order(names []string, v []float64) ([]string, []bool) {
	var out []string
	var ties []bool
	prev := math.NaN()
	for k, i := range rank.Order(v) {
		if math.IsNaN(v[i]) {
			break
		}
		if k > 0 {
			ties = append(ties, v[i] == prev)
		}
		out = append(out, names[i])
		prev = v[i]
	}
	return out, ties
}

// orderText writes an order as "a > b = c".
func orderText(names []string, ties []bool) string {
	var b strings.Builder
	for i, n := range names {
		if i > 0 {
			if i-1 < len(ties) && ties[i-1] {
				b.WriteString(" = ")
			} else {
				b.WriteString(" > ")
			}
		}
		b.WriteString(n)
	}
	return b.String()
}

// text is the estimator's order as the table and the report print it,
// with the policies it left out and why.
func (e EstimatorRanking) text() string {
	text := orderText(e.Order, e.Ties)
	if len(e.Failed) > 0 {
		text += fmt.Sprintf(" (failed: %s)", strings.Join(e.Failed, ", "))
	}
	if len(e.OutOfRange) > 0 {
		text += fmt.Sprintf(" (outside the rewards' range, left out: %s)", strings.Join(e.OutOfRange, ", "))
	}
	if len(e.Distrusted) > 0 {
		text += fmt.Sprintf(" (distrusted by its diagnostics, left out: %s)", strings.Join(e.Distrusted, ", "))
	}
	if len(e.Order) > 0 {
		return text
	}
	switch {
	case len(e.OutOfRange) > 0 && len(e.Distrusted) > 0:
		return "left out: every estimate outside the rewards' range or distrusted by its diagnostics"
	case len(e.OutOfRange) > 0:
		return "left out: every estimate outside the rewards' range"
	case len(e.Distrusted) > 0:
		return "left out: every estimate distrusted by its diagnostics"
	}
	return "failed"
}

// printRanking prints each estimator's order of the policies and, where
// references are known, its rank correlation and regret@1.
func printRanking(out io.Writer, r *Ranking) {
	metrics := false
	for _, e := range r.Estimators {
		metrics = metrics || e.Compared > 0
	}
	fmt.Fprintf(out, "\nranking of the %d target policies, highest estimate first", len(r.Policies))
	if metrics {
		fmt.Fprint(out, "; against the references: Spearman's rank correlation and regret@1 = (V_best - V_picked)/(V_best - V_worst)")
	}
	fmt.Fprintln(out)
	// Every cell ends in a tab, so that the columns line up over all
	// rows; the padding this leaves at the ends of lines is trimmed.
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	if metrics {
		fmt.Fprint(tw, "estimator\tranking\tspearman\tregret@1\t")
	} else {
		fmt.Fprint(tw, "estimator\tranking\t")
	}
	if len(r.ReferenceOrder) > 0 {
		fmt.Fprintf(tw, "\nreference\t%s\t", orderText(r.ReferenceOrder, nil))
		if metrics {
			fmt.Fprint(tw, "\t\t")
		}
	}
	for _, e := range r.Estimators {
		text := e.text()
		fmt.Fprintf(tw, "\n%s\t%s\t", e.Estimator, text)
		if metrics {
			rho, regret := "-", "-"
			if e.Spearman != nil {
				rho = words.Num("%.3f", *e.Spearman)
			}
			if e.RegretAt1 != nil {
				regret = words.Num("%.3f", *e.RegretAt1)
			}
			fmt.Fprintf(tw, "%s\t%s\t", rho, regret)
		}
	}
	fmt.Fprintln(tw)
	tw.Flush()
	for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		fmt.Fprintln(out, strings.TrimRight(line, " "))
	}
	partial := 0
	for _, v := range r.Reference {
		if v != nil {
			partial++
		}
	}
	if metrics && partial < len(r.Policies) {
		fmt.Fprintf(out, "(the correlations and regrets compare the %d policies with a reference)\n", partial)
	}
}
