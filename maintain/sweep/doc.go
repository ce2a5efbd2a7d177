// Package sweep holds the maintenance rules of a clawpit registry
// (docs/contract.md "Maintenance"): what one sweep, or one watchdog pass,
// plans from read-only queries over one snapshot, and how it applies the
// plan as conditional updates in short write transactions, with the report
// of both (Report: its counts, text and JSON).
//
// The rules are written with core's exported API alone: the Tx queries and
// conditional updates, and the registry operations a use case would run
// (Registry.ExpireApprovalTx, CancelApprovalTx, SetTaskStatusTx, Journal,
// Notify), so a change made by a sweep is checked, journaled and notified
// as one asked for by a runtime or an operator. A process does not call New
// itself: package maintain builds every sweeper from its schedule
// (maintain.NewSweeper) and runs it (maintain.Service).
package sweep
