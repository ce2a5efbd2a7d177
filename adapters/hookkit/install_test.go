package hookkit

import (
	"errors"
	"testing"
	"time"

	"github.com/clawpit/clawpit/core"
)

func TestTargetCommand(t *testing.T) {
	tg := Target{Agent: "codex", Binary: "/opt/claw pit/clawpit", DB: "/var/db/reg.db", ApprovalTimeout: 90 * time.Second}
	if got, want := tg.Command(), "exec '/opt/claw pit/clawpit' --db /var/db/reg.db hook --agent codex --approval-timeout 1m30s --installed-by clawpit"; got != want {
		t.Errorf("Command() = %q, want %q", got, want)
	}
	tg.RunInactivity = time.Hour
	if got, want := tg.Command("--gated", "--gate-on ask"), "exec '/opt/claw pit/clawpit' --db /var/db/reg.db hook --agent codex --approval-timeout 1m30s --inactivity 1h --gated --gate-on ask --installed-by clawpit"; got != want {
		t.Errorf("Command(flags) = %q, want %q", got, want)
	}
}

func TestTargetCheck(t *testing.T) {
	tests := []struct {
		name    string
		tg      Target
		file    string
		wantErr bool
	}{
		{name: "default gate", tg: Target{Binary: "/bin/clawpit", DB: "/db"}, file: "/home/u/.codex"},
		{name: "postgres URL", tg: Target{Binary: "/bin/clawpit", DB: "postgres://u@h/db", Gate: "Bash"}, file: "/x"},
		{name: "password in URL", tg: Target{Binary: "/bin/clawpit", DB: "postgres://u:pw@h/db"}, file: "/x", wantErr: true},
		{name: "bad gate", tg: Target{Binary: "/bin/clawpit", DB: "/db", Gate: "("}, file: "/x", wantErr: true},
		{name: "relative binary", tg: Target{Binary: "clawpit", DB: "/db"}, file: "/x", wantErr: true},
		{name: "relative file", tg: Target{Binary: "/bin/clawpit", DB: "/db"}, file: "x", wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.tg.Check("Bash|Write", "file", tc.file)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Check = %v, want error %v", err, tc.wantErr)
			}
			if err != nil && !errors.Is(err, core.ErrInvalid) {
				t.Errorf("error %v does not wrap core.ErrInvalid", err)
			}
			if err == nil && tc.tg.Gate == "" {
				t.Error("the default gate was not filled in")
			}
		})
	}
}
