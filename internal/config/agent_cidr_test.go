package config

import "testing"

func TestAgentClusterCIDR(t *testing.T) {
	c := AgentDefaults()
	c.Server, c.Token = "https://127.0.0.1:6443", "t"
	p, err := c.Parse()
	if err != nil || p.ClusterCIDR.String() != "10.244.0.0/16" {
		t.Fatalf("default: %v %v", p.ClusterCIDR, err)
	}
	c.ClusterCIDR = "10.50.1.2/16"
	if p, err = c.Parse(); err != nil || p.ClusterCIDR.String() != "10.50.0.0/16" {
		t.Fatalf("masked: %v %v", p.ClusterCIDR, err)
	}
	c.ClusterCIDR = "nope"
	if _, err = c.Parse(); err == nil {
		t.Fatal("a bad --cluster-cidr was accepted")
	}
}
