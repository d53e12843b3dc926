// Package policy holds stochastic policies over discrete actions: a
// tabular policy (one row of action probabilities per state), mixtures
// (1-alpha)*pi_a + alpha*pi_b as the paper builds its behavior policies
// (Section 5), the softmax of a Q table with a temperature, and the CSV
// format of the authors' Taxi policies (state,p0..p5).
package policy
