package experiment

// The SUMO experiment needs the sumo binary; without it, running it fails
// with one line saying how to install SUMO (traci.ErrNotFound).
func init() { Register(sumoExperiment()) }
