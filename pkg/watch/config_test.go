package watch

import (
	"errors"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"
)

func TestConfigValidate(t *testing.T) {
	valid := func() Config {
		return Config{Client: fake.NewClientset(), WatcherID: "w", ConfigMaps: []string{"ingress/config"}}
	}
	tests := []struct {
		name   string
		change func(*Config)
		ok     bool
	}{
		{name: "defaults", change: func(*Config) {}, ok: true},
		{name: "no client", change: func(c *Config) { c.Client = nil }},
		{name: "no watcher id", change: func(c *Config) { c.WatcherID = "" }},
		{name: "configmap without namespace", change: func(c *Config) { c.ConfigMaps = []string{"config"} }},
		{name: "bad watch namespace", change: func(c *Config) { c.WatchNamespace = "Not_A_Namespace" }},
		{name: "bad stream name", change: func(c *Config) { c.Stream = "a.b" }},
		{name: "bad subject prefix", change: func(c *Config) { c.SubjectPrefix = "ingress.>" }},
		{name: "too many replicas", change: func(c *Config) { c.StreamReplicas = 7 }},
		{name: "creds and user", change: func(c *Config) { c.NATSCredsFile, c.NATSUser = "x.creds", "u" }},
		{name: "password without user", change: func(c *Config) { c.NATSPassword = "p" }},
		{name: "embedded without host:port", change: func(c *Config) { c.EmbeddedNATSDir, c.NATSURL = "/tmp/x", "tls://h" }},
		{name: "embedded", change: func(c *Config) { c.EmbeddedNATSDir, c.NATSURL = "/tmp/x", "nats://127.0.0.1:4222" }, ok: true},
		{name: "election without namespace", change: func(c *Config) { c.LeaderElect = true }},
		{name: "election", change: func(c *Config) { c.LeaderElect, c.ElectionNamespace = true, "ingress" }, ok: true},
		{name: "renew deadline over lease", change: func(c *Config) {
			c.LeaderElect, c.ElectionNamespace, c.RenewDeadline = true, "ingress", time.Minute
		}},
		{name: "lease in milliseconds", change: func(c *Config) {
			c.LeaderElect, c.ElectionNamespace, c.LeaseDuration = true, "ingress", 2500*time.Millisecond
		}},
		{name: "renew deadline within the retry jitter", change: func(c *Config) {
			c.LeaderElect, c.ElectionNamespace, c.RenewDeadline, c.RetryPeriod = true, "ingress", 1100*time.Millisecond, time.Second
		}},
		{name: "kubernetes timings", change: func(c *Config) {
			c.LeaderElect, c.ElectionNamespace = true, "ingress"
			c.LeaseDuration, c.RenewDeadline, c.RetryPeriod = 15*time.Second, 10*time.Second, 2*time.Second
		}, ok: true},
		{name: "publish service and addresses", change: func(c *Config) {
			c.PublishService, c.PublishStatusAddress = "ingress/lb", []string{"198.18.0.1"}
		}},
		{name: "publish service without namespace", change: func(c *Config) { c.PublishService = "lb" }},
		{name: "status addresses", change: func(c *Config) { c.PublishStatusAddress = []string{"198.18.0.1", "lb.example.com", "2001:db8::1"} }, ok: true},
		{name: "bad status address", change: func(c *Config) { c.PublishStatusAddress = []string{"not an address"} }},
		{name: "no workers", change: func(c *Config) { c.Workers = -1 }},
		{name: "status quorum", change: func(c *Config) { c.StatusSyncers, c.StatusMaxWait = StatusQuorum, time.Second }, ok: true},
		{name: "unknown status rule", change: func(c *Config) { c.StatusSyncers = "most" }},
		{name: "negative status wait", change: func(c *Config) { c.StatusMaxWait = -time.Second }},
		{name: "gateway services", change: func(c *Config) {
			c.GatewayServiceSelector, c.ElectionNamespace, c.GatewayServiceType, c.GatewayPortRange = "app=syncer,tier=edge", "ingress", "ClusterIP", "20000-20000"
		}, ok: true},
		{name: "gateway services without a namespace", change: func(c *Config) { c.GatewayServiceSelector = "app=syncer" }},
		{name: "gateway service selector with an operator", change: func(c *Config) {
			c.GatewayServiceSelector, c.ElectionNamespace = "app!=syncer", "ingress"
		}},
		{name: "gateway service type NodePort", change: func(c *Config) { c.GatewayServiceType = "NodePort" }},
		{name: "gateway port range reversed", change: func(c *Config) { c.GatewayPortRange = "2000-1000" }},
		{name: "gateway port range of one number", change: func(c *Config) { c.GatewayPortRange = "2000" }},
		{name: "gateway port range past 65535", change: func(c *Config) { c.GatewayPortRange = "65000-70000" }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := valid()
			tc.change(&c)
			err := c.Validate()
			if (err == nil) != tc.ok {
				t.Fatalf("Validate() = %v, want ok %v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("%v does not wrap ErrInvalidConfig", err)
			}
		})
	}
}
