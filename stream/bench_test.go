package stream_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/ihope-ope/ihope/dataset/logio"
	"github.com/ihope-ope/ihope/stream"
)

// benchShards writes 10 Parquet shards of 25 Taxi episodes of 400 steps
// (100,000 steps in all) and returns their directory.
func benchShards(b *testing.B) string {
	dir := b.TempDir()
	for i := range 10 {
		d := taxiLog(b, uint64(i), 25, 400)
		for e := range d.IDs {
			d.IDs[e] = fmt.Sprintf("s%d-%d", i, e)
		}
		if err := logio.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%02d.parquet", i)), d); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// BenchmarkStream streams 100,000 Taxi steps in 10 Parquet shards
// through the default streamable estimators, with 0 and 20 Poisson
// resamples; ns/step is the figure to read.
func BenchmarkStream(b *testing.B) {
	dir := benchShards(b)
	files, _ := stream.Files(dir)
	for _, B := range []int{0, 20} {
		b.Run(fmt.Sprintf("resamples=%d", B), func(b *testing.B) {
			for b.Loop() {
				stats, err := stream.New(stream.Config{Estimators: []string{"naive", "wis-trajectory", "wis-stepwise", "bch-tabular"},
					Gamma: 1, Resamples: B, Seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				r := stream.Reader{Files: files}
				if err := r.Each(stats.Add); err != nil {
					b.Fatal(err)
				}
				if _, err := stats.Finish(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100000, "ns/step")
		})
	}
}

// BenchmarkAdd is the accumulation alone, per estimator, on 100,000
// steps in memory.
func BenchmarkAdd(b *testing.B) {
	d := taxiLog(b, 1, 250, 400)
	for _, name := range stream.Streamable() {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				stats, _ := stream.New(stream.Config{Estimators: []string{name}, Gamma: 1})
				if err := stats.Add(d, 0, d.NumEpisodes()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/100000, "ns/step")
		})
	}
}
