package core

import (
	"os"
	"time"
)

// Hosts (README "Many hosts: PostgreSQL"): a PostgreSQL registry is shared by many machines. A job
// runs under a supervisor on one host; only that host can see and signal its
// processes, so job liveness (J8), reaping and cancel signal a job's
// processes only there. A sweep on another host never marks such a job
// lost: it reports a host whose active jobs have gone unconfirmed (its
// sweep has not run) for more than two sweep intervals.

// EnvHost overrides the host name jobs are recorded under (tests simulate
// two hosts on one machine with it).
const EnvHost = "CLAWPIT_HOST"

// EntityHost names a host in findings.
const EntityHost = "host"

// DefaultHostStaleAfter is two default sweep intervals (60 s each).
const DefaultHostStaleAfter = 2 * time.Minute

// HostName is this machine's name for jobs: $CLAWPIT_HOST, else the
// hostname, else "localhost".
func HostName() string {
	if h := os.Getenv(EnvHost); h != "" {
		return h
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "localhost"
}
