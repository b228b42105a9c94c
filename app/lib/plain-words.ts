/**
 * Field messages of the input checks' library that read as program output to a person ("Required",
 * "Expected string, received number"), in the plain words the dashboard shows under a field instead.
 * The API answers its own messages unchanged; everything not listed here is already plain.
 */
const PLAIN: [RegExp, string][] = [
  [/^Required$/, "must be filled in"],
  [/^Expected (\w+), received (null|undefined)$/, "must be filled in"],
  [/^Expected (string|number|boolean|array|object), received \w+$/, "has the wrong kind of value"],
  [/^Invalid input$/, "is not valid"],
  [/^Invalid url$/, "must be a web address, such as https://example.com/"],
  [/^Invalid email$/, "must be an e-mail address, such as name@example.com"],
];

export function plainFieldMessage(message: string): string {
  for (const [re, plain] of PLAIN) if (re.test(message)) return plain;
  return message;
}

/** Every message of a `{fields}` map in plain words. */
export function plainFields(fields: Record<string, string[]>): Record<string, string[]> {
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v.map(plainFieldMessage)]));
}
