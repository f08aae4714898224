package sandbox

import (
	"flag"
	"net/netip"
	"testing"
	"time"
)

func TestFlags(t *testing.T) {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	f := RegisterFlags(fs)
	if err := fs.Parse([]string{"-sandbox", "landlock", "-sandbox-procs", "64", "-sandbox-memory-mb", "128", "-sandbox-cpu", "10m",
		"-sandbox-allow-nets", "10.1.2.3/32, fd00::/8", "-sandbox-user", "65534:65534", "-sandbox-allow-network=false"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := f.Config()
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Mode != Landlock || cfg.Limits.Procs != 64 || cfg.Limits.Memory != 128<<20 || cfg.Limits.CPU != 10*time.Minute ||
		cfg.Limits.FileSize != DefaultLimits.FileSize || !cfg.NoNetwork || cfg.RunAs == nil || cfg.RunAs.Uid != 65534 ||
		len(cfg.AllowNets) != 2 || cfg.AllowNets[1] != netip.MustParsePrefix("fd00::/8") {
		t.Errorf("config %+v", cfg)
	}
	for _, bad := range [][]string{{"-sandbox", "docker"}, {"-sandbox-allow-nets", "10.0.0.0"}, {"-sandbox-user", "no-such-user-here"}} {
		fs := flag.NewFlagSet("worker", flag.ContinueOnError)
		f := RegisterFlags(fs)
		if err := fs.Parse(bad); err != nil {
			t.Fatal(err)
		}
		if _, err := f.Config(); err == nil {
			t.Errorf("%v: want an error", bad)
		}
	}
}
