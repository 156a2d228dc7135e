package msgspec

// Message says what every request carries.
type Message struct {
	Recipient  string      `json:"recipient,omitempty" jsonschema_description:"a number or a pattern with one digit range: +7999{0000000-9999999} (the default without recipients)"`
	Recipients *Recipients `json:"recipients,omitempty" jsonschema_description:"recipients from a range or a CSV file (instead of recipient)"`
	Text       string      `json:"text,omitempty" jsonschema_description:"text template: {{.Seq}} {{.Client}} {{.Recipient}} {{.Run}} {{words N}} {{digits N}}"`
	TextBytes  int         `json:"textBytes,omitempty" jsonschema:"minimum=0" jsonschema_description:"pad or cut the rendered text to this many bytes"`
	TextParts  int         `json:"textParts,omitempty" jsonschema:"minimum=0" jsonschema_description:"pad the text to fill this many SMS parts (153 GSM or 67 UCS-2 characters each)"`
	Fill       string      `json:"fill,omitempty" jsonschema:"enum=ascii,enum=cyrillic,enum=emoji" jsonschema_description:"characters used for padding (default ascii)"`
	ExternalID string      `json:"externalId,omitempty" jsonschema_description:"notify: tagged (default) sends the correlation tag as externalId; none sends no externalId; anything else is a template of your own ids such as order-{{.Seq}} (the report then matches callbacks by joining attempts)"`

	// messaging
	Scenario        []Item            `json:"scenario,omitempty" jsonschema_description:"messaging: the ordered channels with failover"`
	Callback        string            `json:"callback,omitempty" jsonschema_description:"messaging: callback URL (default: the sink)"`
	Schedule        *Schedule         `json:"schedule,omitempty"`
	URLOptions      *URLOptions       `json:"urlOptions,omitempty"`
	TrackData       map[string]string `json:"trackData,omitempty" jsonschema_description:"messaging: extra trackData keys (msgload adds its correlation keys)"`
	ClientRequestID string            `json:"clientRequestId,omitempty" jsonschema_description:"messaging: clientRequestId template (at most 100 characters once rendered)"`
}

// Recipients lists recipients from a range or a CSV file.
type Recipients struct {
	From   string `json:"from,omitempty" jsonschema_description:"first number of a range (+79990000000)"`
	To     string `json:"to,omitempty" jsonschema_description:"last number of a range, same length as from"`
	CSV    string `json:"csv,omitempty" jsonschema_description:"CSV file of numbers (relative to the scenario file)"`
	Column string `json:"column,omitempty" jsonschema_description:"CSV column name holding the number (default: the first column)"`
	Order  string `json:"order,omitempty" jsonschema:"enum=sequential,enum=random" jsonschema_description:"sequential (default) or random"`
}

// Item is one messaging scenario item (a channel of the cascade).
type Item struct {
	Channel          string       `json:"channel" jsonschema:"required"` // enum: scenarios.Schema, from rundir
	Sender           string       `json:"sender"`                        // description: scenarios.Schema, from rundir's limits
	Text             string       `json:"text,omitempty" jsonschema_description:"text template for this channel (default: message.text)"`
	Failover         *Failover    `json:"failover,omitempty"`
	Attachments      []Attachment `json:"attachments,omitempty"`
	Buttons          []Button     `json:"buttons,omitempty"`
	MobilePushAction string       `json:"mobilePushAction,omitempty"`
	MobilePushTitle  string       `json:"mobilePushTitle,omitempty"`
}

// Failover is the cascading rule of an item.
type Failover struct {
	TTL             int    `json:"ttl,omitempty" jsonschema:"minimum=0" jsonschema_description:"seconds to wait for condition_status"` // maximum: scenarios.Schema
	ConditionStatus string `json:"condition_status,omitempty"`                                                                         // enum: scenarios.Schema
}

// Attachment is media content.
type Attachment struct {
	Type string `json:"type" jsonschema:"required"` // enum: scenarios.Schema
	URL  string `json:"url" jsonschema:"required"`
}

// Button is a message button.
type Button struct {
	Caption string `json:"caption" jsonschema:"required"`
	Action  string `json:"action" jsonschema:"required"`
}

// Schedule is deferred or time-windowed sending.
type Schedule struct {
	SendAfter            string `json:"sendAfter,omitempty" jsonschema_description:"RFC 3339 time"`
	StartTime            string `json:"startTime,omitempty" jsonschema_description:"HH:MM:SS"`
	StopTime             string `json:"stopTime,omitempty" jsonschema_description:"HH:MM:SS"`
	UseRecipientTimeZone bool   `json:"useRecipientTimeZone,omitempty"`
}

// URLOptions is link shortening.
type URLOptions struct {
	ShortenURL bool `json:"shortenUrl"`
}
