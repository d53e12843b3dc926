// Package behavior fits the behavior policy pi0(a|s) that logged a
// dataset, for logs that carry no behavior probabilities (medical records,
// human operators, legacy systems): the importance-sampling and
// density-ratio estimators of package ope then run on the fitted
// probabilities.
//
// A Learner fits a Model from the logged (state, action) pairs; the model
// gives log pi0(a_j|s_j) at every step of a log. Counts estimates the
// action frequencies of each discrete state, smoothed; Logistic is a
// multinomial logistic regression on standardised real states, its
// penalty chosen by held-out log-likelihood. Actions must be discrete: a
// density of real actions is not fitted.
//
// CrossFit fits them across folds of episodes, so that an episode's own
// actions never set its own propensities (Chernozhukov et al. 2018):
// fitted in sample, a model puts more mass on the actions that happen to
// be logged in a state than the behavior does, and the ratios pi/pi0
// shrink toward the ones the log already favours. Calibrate rescales
// cross-fitted probabilities of discrete states so that each state's
// ratios average 1 in sample, without which the density-ratio estimators
// fail on them; Fit is the whole recipe of ihope estimate --fit-behavior.
// Compare measures how far the fitted probabilities are from logged
// ones, a check of the logging itself when a log has both.
//
// References:
//
// Chernozhukov, Chetverikov, Demirer, Duflo, Hansen, Newey, Robins.
// Double/debiased machine learning for treatment and structural
// parameters. The Econometrics Journal 21(1), 2018.
//
// Hanna, Niekum, Stone. Importance Sampling Policy Evaluation with an
// Estimated Behavior Policy. ICML 2019.
//
// Imai, Ratkovic. Covariate balancing propensity score. Journal of the
// Royal Statistical Society B 76(1), 2014.
package behavior
