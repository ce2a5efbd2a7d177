package core

import (
	"os"
	"os/user"
	"strings"
)

// OperatorActor returns the operator identity recorded in the event journal
// for human actions (docs/contract.md "Entities and statuses"): "$USER@<hostname>", plus " from <ip>" when the
// session arrived over SSH (the first field of SSH_CONNECTION, the client
// address). The user name comes from USER, else LOGNAME, else the OS account
// database; "unknown" when none is available.
func OperatorActor() Actor {
	return operatorActor(os.Getenv, os.Hostname, user.Current)
}

// operatorActor is OperatorActor with its environment injected (tests).
func operatorActor(getenv func(string) string, hostname func() (string, error), current func() (*user.User, error)) Actor {
	name := getenv("USER")
	if name == "" {
		name = getenv("LOGNAME")
	}
	if name == "" {
		if u, err := current(); err == nil && u.Username != "" {
			name = u.Username
		}
	}
	if name == "" {
		name = "unknown"
	}
	host, err := hostname()
	if err != nil || host == "" {
		host = "localhost"
	}
	id := name + "@" + host
	if f := strings.Fields(getenv("SSH_CONNECTION")); len(f) > 0 {
		id += " from " + f[0]
	}
	return Actor(id)
}
