package logview

import "charm.land/lipgloss/v2"

// lipglossMark is a style whose rendering is visible in plain text:
// "[tag:text]", so tests can see which style a span got without escapes.
func lipglossMark(tag string) lipgloss.Style {
	return lipgloss.NewStyle().Transform(func(s string) string { return "[" + tag + ":" + s + "]" })
}
