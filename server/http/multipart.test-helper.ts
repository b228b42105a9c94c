/** A form field: a text value, or a file with its name and media type. */
export type FormField = string | { name: string; type: string; data: Buffer };

/** A multipart/form-data body of these fields, as a browser sends a form with a file, and its Content-Type. */
export function multipartBody(fields: Record<string, FormField>, boundary: string) {
  const parts = Object.entries(fields).map(([k, v]) =>
    typeof v === "string"
      ? Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"\r\n\r\n${v}\r\n`)
      : Buffer.concat([
          Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${k}"; filename="${v.name}"\r\nContent-Type: ${v.type}\r\n\r\n`),
          v.data,
          Buffer.from("\r\n"),
        ]),
  );
  return { body: Buffer.concat([...parts, Buffer.from(`--${boundary}--\r\n`)]), type: `multipart/form-data; boundary=${boundary}` };
}
