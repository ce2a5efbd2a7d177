package tui

import (
	"strings"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
)

// lineInput is a one-line text input for the filter and dialog prompts. It
// is deliberately tiny: typing appends at the end (no cursor movement), so a
// filter keystroke costs one append and the screen never depends on a
// blinking cursor.
type lineInput struct {
	text  []rune
	limit int // max runes; 0 = 256
}

// inputResult tells the caller what a key did to the input.
type inputResult int

const (
	inputNone    inputResult = iota // key not for the input
	inputChanged                    // text changed
	inputSame                       // key consumed, text unchanged
	inputSubmit                     // enter
	inputCancel                     // esc
)

func (in *lineInput) value() string { return string(in.text) }

func (in *lineInput) set(s string) { in.text = []rune(s) }

func (in *lineInput) max() int {
	if in.limit <= 0 {
		return 256
	}
	return in.limit
}

// update applies a key press or a paste.
func (in *lineInput) update(msg tea.Msg) inputResult {
	switch msg := msg.(type) {
	case tea.PasteMsg:
		return in.insert(typed(msg.Content))
	case tea.KeyPressMsg:
		switch msg.String() {
		case "enter":
			return inputSubmit
		case "esc":
			return inputCancel
		case "backspace", "ctrl+h":
			if len(in.text) == 0 {
				return inputSame
			}
			in.text = in.text[:len(in.text)-1]
			return inputChanged
		case "ctrl+u":
			if len(in.text) == 0 {
				return inputSame
			}
			in.text = in.text[:0]
			return inputChanged
		case "ctrl+w":
			t := strings.TrimRight(string(in.text), " ")
			i := strings.LastIndexByte(t, ' ')
			in.text = []rune(t[:i+1])
			return inputChanged
		}
		if msg.Text != "" && msg.Mod&^(tea.ModShift|tea.ModCapsLock) == 0 {
			return in.insert(typed(msg.Text))
		}
		return inputSame
	}
	return inputNone
}

func (in *lineInput) insert(s string) inputResult {
	if s == "" {
		return inputSame
	}
	room := in.max() - len(in.text)
	if room <= 0 {
		return inputSame
	}
	if utf8.RuneCountInString(s) > room {
		s = string([]rune(s)[:room])
	}
	in.text = append(in.text, []rune(s)...)
	return inputChanged
}

// view renders the text and a reverse-video cursor cell, keeping the tail
// visible within w cells.
func (in *lineInput) view(st lipgloss.Style, w int) string {
	s := string(in.text)
	if w > 1 && width(s) > w-1 {
		s = truncLeft(s, w-1)
	}
	return st.Render(s) + cursorStyle.Render(" ")
}

var cursorStyle = lipgloss.NewStyle().Reverse(true)
