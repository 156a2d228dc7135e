// Package msgspec is the message part of a scenario: what every request
// carries (recipients, text templates, the messaging channels with their
// failover), the small template language of the text and the recipient
// patterns. It holds plain types and their parsers only, so the body generator
// on the attack's hot path (attack/message) can use it without linking the
// scenario loader and what the loader links (YAML, JSON Schema, the threshold
// language). Package scenarios declares these types as its own (aliases),
// decodes and checks them.
package msgspec
