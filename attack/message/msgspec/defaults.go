package msgspec

// The message's defaults, defined once: scenarios' defaults table writes them
// into a scenario (and schema.json), and attack/message falls back on them for
// a spec built in code without them.
const (
	// DefaultRecipient is the recipient pattern when a message names none.
	DefaultRecipient = "+7999{0000000-9999999}"
	// DefaultText is the message text when a message gives none.
	DefaultText = "msgload {{.Run}} #{{.Seq}}"
	// DefaultFill pads a text to its size (textBytes, textParts).
	DefaultFill = "ascii"
	// DefaultSender is the sender of a messaging item that names none.
	DefaultSender = "msgload"
)
