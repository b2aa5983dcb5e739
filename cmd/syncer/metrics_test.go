package main

import (
	"flag"
	"io"
	"slices"
	"testing"

	"github.com/ingress-sync/ingress-sync/pkg/nginx"
)

func TestMetricsFlags(t *testing.T) {
	cases := []struct {
		name    string
		args    []string
		check   func(m nginx.MetricsOptions) bool
		wantErr bool
	}{
		{"defaults: on, per host, ingress-nginx's buckets", nil, func(m nginx.MetricsOptions) bool {
			return !m.Disabled && !m.WithoutHost && m.MaxSeries == nginx.DefaultMetricsMaxSeries &&
				slices.Equal(m.TimeBuckets, nginx.DefaultTimeBuckets)
		}, false},
		{"off, without host", []string{"--enable-metrics=false", "--metrics-per-host=false"}, func(m nginx.MetricsOptions) bool {
			return m.Disabled && m.WithoutHost
		}, false},
		{"buckets and cap", []string{"--time-buckets=0.1,1,10", "--metrics-max-series=50"}, func(m nginx.MetricsOptions) bool {
			return slices.Equal(m.TimeBuckets, []float64{0.1, 1, 10}) && m.MaxSeries == 50
		}, false},
		{"buckets not increasing", []string{"--size-buckets=10,5"}, nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var m nginx.MetricsOptions
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			registerMetricsFlags(fs, &m)
			err := fs.Parse(c.args)
			if (err != nil) != c.wantErr {
				t.Fatalf("Parse: %v", err)
			}
			if c.check != nil && !c.check(m) {
				t.Errorf("options %+v", m)
			}
		})
	}
}
