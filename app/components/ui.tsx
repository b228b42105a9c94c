import { useEffect, useId, useRef, useState, type ReactNode } from "react";
import { useCanChange } from "../lib/can-change";
import type { FormError } from "../lib/messages";

/** Errors of one field from an action's `{error, fields}`; several names can feed one input. */
export function fieldErrors(err: FormError | null | undefined, ...names: string[]): string[] {
  if (!err) return [];
  return names.flatMap((n) => err.fields?.[n] ?? []);
}

type FieldProps = {
  label: string;
  name: string;
  errors?: string[];
  hint?: ReactNode;
  className?: string;
  children?: (ids: { id: string; describedBy: string | undefined; invalid: boolean }) => ReactNode;
} & Omit<React.InputHTMLAttributes<HTMLInputElement>, "children">;

/** A labelled input with its hint and its errors announced to screen readers. */
export function Field({ label, name, errors = [], hint, className, children, id: givenId, ...input }: FieldProps) {
  const auto = useId();
  const id = givenId ?? `f${auto.replace(/:/g, "")}`;
  const hintId = hint ? `${id}-hint` : undefined;
  const errId = errors.length ? `${id}-err` : undefined;
  const describedBy = [hintId, errId].filter(Boolean).join(" ") || undefined;
  const invalid = errors.length > 0;
  return (
    <div className={className}>
      <label htmlFor={id} className="label">
        {label}
      </label>
      {children ? (
        children({ id, describedBy, invalid })
      ) : (
        <input id={id} name={name} className="input" aria-invalid={invalid || undefined} aria-describedby={describedBy} {...input} />
      )}
      {hint ? (
        <p id={hintId} className="hint">
          {hint}
        </p>
      ) : null}
      <FieldErrors id={errId} errors={errors} />
    </div>
  );
}

export function FieldErrors({ id, errors }: { id?: string; errors: string[] }) {
  if (!errors.length) return null;
  return (
    <ul id={id} className="field-error">
      {errors.map((e, i) => (
        <li key={i}>{e}</li>
      ))}
    </ul>
  );
}

/** The form-level summary: the sentence for the code, focused so keyboard users hear it. */
export function FormAlert({ error, className = "" }: { error: FormError | null | undefined; className?: string }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (error) ref.current?.focus();
  }, [error]);
  if (!error) return null;
  const unnamed = Object.entries(error.fields ?? {}).filter(([k]) => k === "body");
  return (
    <div ref={ref} tabIndex={-1} role="alert" className={`alert-error ${className}`}>
      <p>
        {error.message} <span className="font-mono text-xs">({error.error})</span>
      </p>
      {unnamed.map(([k, msgs]) => (
        <p key={k}>{msgs.join("; ")}</p>
      ))}
    </div>
  );
}

export function Success({ children }: { children: ReactNode }) {
  return (
    <div role="status" className="alert-success">
      {children}
    </div>
  );
}

export function PageHeader({ title, children, subtitle }: { title: string; subtitle?: ReactNode; children?: ReactNode }) {
  return (
    <div className="mb-6 flex flex-wrap items-end justify-between gap-3">
      <div className="min-w-0">
        <h1 className="text-2xl font-semibold tracking-tight">{title}</h1>
        {subtitle ? <p className="mt-1 text-sm text-slate-600 dark:text-slate-400">{subtitle}</p> : null}
      </div>
      {children ? <div className="flex flex-wrap gap-2">{children}</div> : null}
    </div>
  );
}

/** Copies a value; says so for screen readers. Without clipboard access it selects the text instead. */
export function CopyButton({ value, label = "Copy", className = "btn-secondary" }: { value: string; label?: string; className?: string }) {
  const [copied, setCopied] = useState(false);
  return (
    <button
      type="button"
      className={className}
      data-copy={value}
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(value);
          setCopied(true);
          setTimeout(() => setCopied(false), 2000);
        } catch {
          window.prompt("Copy this value", value);
        }
      }}
    >
      <span aria-live="polite">{copied ? "Copied" : label}</span>
    </button>
  );
}

/**
 * A page of cards with its "add" form beside it (below it on a narrow screen): the list, or `empty`
 * while there is none, and `aside` (the form and its help).
 */
export function ListBesideForm<T>({
  items,
  label,
  empty,
  render,
  aside,
  listClassName = "space-y-4",
}: {
  items: T[];
  label: string;
  empty: ReactNode;
  render: (item: T) => ReactNode;
  aside: ReactNode;
  listClassName?: string;
}) {
  const canChange = useCanChange();
  return (
    <div className={canChange ? "grid gap-6 lg:grid-cols-[1fr_22rem]" : "grid gap-6"}>
      <div className="min-w-0">
        {items.length === 0 ? (
          <Empty>{empty}</Empty>
        ) : (
          <ul className={listClassName} aria-label={label}>
            {items.map(render)}
          </ul>
        )}
      </div>
      {canChange ? <div className="space-y-4 self-start">{aside}</div> : null}
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return (
    <p className="rounded-md border border-dashed border-slate-300 p-6 text-center text-sm text-slate-600 dark:border-slate-700 dark:text-slate-400">
      {children}
    </p>
  );
}

/** Destructive action behind a typed or ticked confirmation; works without JavaScript. */
export function ConfirmDelete({ label, what, intent = "delete", children }: { label: string; what: string; intent?: string; children?: ReactNode }) {
  const id = useId().replace(/:/g, "");
  return (
    <details className="rounded-md border border-red-200 p-3 dark:border-red-900">
      <summary className="cursor-pointer text-sm font-medium text-red-700 dark:text-red-400">{label}</summary>
      <div className="mt-3 space-y-3">
        {children}
        <div className="flex items-start gap-2">
          <input id={`c${id}`} type="checkbox" name="confirm" value="yes" required className="mt-1 h-4 w-4" />
          <label htmlFor={`c${id}`} className="text-sm">
            Yes, delete {what}. This cannot be undone.
          </label>
        </div>
        <button type="submit" name="intent" value={intent} className="btn-danger">
          {label}
        </button>
      </div>
    </details>
  );
}

/** A box that scrolls sideways when its content (a wide table) does not fit, focusable so a keyboard can scroll it; `relative` keeps screen-reader-only labels inside it. */
export function ScrollRegion({ label, className = "", children }: { label: string; className?: string; children: React.ReactNode }) {
  return (
    // eslint-disable-next-line jsx-a11y/no-noninteractive-tabindex -- a scrolling region must take focus to be scrolled by keys
    <div className={`relative overflow-x-auto ${className}`} role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
