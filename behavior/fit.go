package behavior

import "github.com/ihope-ope/ihope/dataset"

// Fit is the whole recipe of ihope estimate --fit-behavior: fit the
// behavior policy with Learner, cross-fitted over Folds folds of episodes
// (CrossFit), calibrate the result per state for discrete states
// (Calibrate), and put it in the log's behavior column.
type Fit struct {
	// Learner fits pi0 (nil: For(d), Counts or Logistic by the states).
	Learner Learner
	// Folds is the number of cross-fitting folds (0: DefaultFolds; 1:
	// fitted in sample).
	Folds int
	// Uncalibrated turns Calibrate off.
	Uncalibrated bool
}

// Apply returns d with the fitted behavior log-probabilities in
// LogBehavior (the other columns shared with d, whose own LogBehavior, if
// any, is ignored), and the cross-fitted log-probabilities before
// calibration, the estimate of pi0 to Compare with logged ones.
func (f Fit) Apply(d *dataset.Dataset) (fitted *dataset.Dataset, crossFitted []float64, err error) {
	l := f.Learner
	if l == nil {
		if l, err = For(d); err != nil {
			return nil, nil, err
		}
	}
	lp, err := CrossFit(l, d, f.Folds)
	if err != nil {
		return nil, nil, err
	}
	weigh := lp
	if d.Discrete() && !f.Uncalibrated {
		if weigh, err = Calibrate(d, lp); err != nil {
			return nil, nil, err
		}
	}
	fitted, err = d.WithBehavior(weigh)
	if err != nil {
		return nil, nil, err
	}
	return fitted, lp, nil
}
