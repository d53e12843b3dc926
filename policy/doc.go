// Package policy holds stochastic policies.
//
// For discrete actions: a tabular policy (one row of action probabilities
// per state), mixtures (1-alpha)*pi_a + alpha*pi_b as the paper builds its
// behavior policies (Section 5), the softmax of a Q table with a
// temperature, and the CSV format of the authors' Taxi policies
// (state,p0..p5).
//
// For real actions: a Gaussian truncated to the action box whose mean is a
// small neural network of the observation, with an exact log-density
// normalised over the truncation, and exact mixtures of two such policies;
// and Draws, a target known only by actions drawn from it at given states
// (ihope estimate --target-draws), which the value models average over.
package policy
