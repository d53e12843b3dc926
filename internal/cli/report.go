package cli

func writeReport(path string, rep *estimateReport, args []string) error { return nil }
