import { useCombobox } from "downshift";
import { useEffect, useRef, useState } from "react";
import { useEnv } from "../lib/env";
import { useHydrated } from "../lib/hydrated";
import { trpc } from "../lib/trpc.client";
import { FieldErrors } from "./ui";

export type PickedLink = { id: string; slug: string };
type Item = { id: string | null; slug: string; url: string };

const ALL: Item = { id: null, slug: "", url: "" };

/**
 * Until the script runs, nothing can open the list: the field is announced as the plain text
 * input it is then, and the empty list is no second thing named "Link".
 */
const NOT_YET_INPUT = {
  role: undefined,
  "aria-expanded": undefined,
  "aria-controls": undefined,
  "aria-activedescendant": undefined,
  "aria-autocomplete": undefined,
} as const;
const NOT_YET_MENU = { role: undefined, "aria-labelledby": undefined } as const;

/**
 * The analytics page's "Link" field: a WAI-ARIA combobox (downshift) whose options the server
 * answers as the person types, so the page carries no list of links. Without JavaScript it is a
 * plain text input (`link_q`) that the loader resolves to a link; with it, picking an option
 * fills the hidden `link` with the id. Empty means every link. Give it a `key` of the selected
 * link, so that another link in the URL starts it afresh.
 */
export function LinkPicker({ selected, errors, choices }: { selected: PickedLink | null; errors: string[]; choices: React.ReactNode }) {
  const { apiUrl } = useEnv();
  const [items, setItems] = useState<Item[]>([ALL]);
  const [picked, setPicked] = useState<PickedLink | null>(selected);
  const [status, setStatus] = useState("");
  const asked = useRef(0);
  const hydrated = useHydrated();

  const ask = (q: string) => {
    const n = ++asked.current;
    trpc(apiUrl)
      .link.suggest.query({ q: q.trim().slice(0, 200), limit: 10 })
      .then((r) => {
        if (n !== asked.current) return; // an older answer arriving late
        setItems([ALL, ...r.links]);
        setStatus(r.links.length ? `${r.links.length} ${r.links.length === 1 ? "link matches" : "links match"}` : "No link matches");
      })
      .catch(() => n === asked.current && setStatus("Could not search right now"));
  };
  const timer = useRef<ReturnType<typeof setTimeout>>();
  useEffect(() => () => clearTimeout(timer.current), []);

  const { isOpen, highlightedIndex, getLabelProps, getInputProps, getMenuProps, getItemProps } = useCombobox<Item>({
    items,
    // Fixed ids: the server's and the browser's render must agree.
    id: "link-picker",
    labelId: "link-label",
    inputId: "link-q",
    menuId: "link-options",
    initialInputValue: selected?.slug ?? "",
    initialSelectedItem: selected ? { ...selected, url: "" } : ALL,
    itemToString: (i) => (i && i.id ? i.slug : ""),
    itemToKey: (i) => i?.id ?? "",
    onInputValueChange: ({ inputValue, type }) => {
      if (type !== useCombobox.stateChangeTypes.InputChange) return;
      if (!inputValue.trim()) setPicked(null);
      clearTimeout(timer.current);
      timer.current = setTimeout(() => ask(inputValue), 150);
    },
    onIsOpenChange: ({ isOpen: open, inputValue }) => {
      if (open) ask(inputValue ?? "");
    },
    onSelectedItemChange: ({ selectedItem }) => setPicked(selectedItem?.id ? { id: selectedItem.id, slug: selectedItem.slug } : null),
  });
  const errId = errors.length ? "link-q-err" : undefined;
  const hintId = "link-q-hint";
  return (
    <div className="relative">
      <label {...getLabelProps()} htmlFor="link-q" className="label">
        Link
      </label>
      <input
        {...getInputProps({
          name: "link_q",
          type: "text",
          className: "input",
          placeholder: "All links",
          autoComplete: "off",
          spellCheck: false,
          "aria-invalid": errors.length ? true : undefined,
          "aria-describedby": [hintId, errId].filter(Boolean).join(" "),
        })}
        {...(hydrated ? {} : NOT_YET_INPUT)}
      />
      <input type="hidden" name="link" value={picked?.id ?? ""} />
      <p id={hintId} className="sr-only">
        Type part of a slug or destination; empty shows every link.
      </p>
      <ul
        {...getMenuProps()}
        {...(hydrated ? {} : NOT_YET_MENU)}
        hidden={!isOpen}
        className="absolute z-20 mt-1 max-h-72 w-full min-w-[16rem] overflow-auto rounded-md border border-slate-200 bg-white py-1 shadow-lg dark:border-slate-700 dark:bg-slate-900"
      >
        {isOpen
          ? items.map((item, index) => (
              <li
                key={item.id ?? "all"}
                {...getItemProps({ item, index })}
                className={`cursor-pointer px-3 py-1.5 text-sm ${highlightedIndex === index ? "bg-indigo-100 dark:bg-indigo-900" : ""}`}
              >
                {item.id ? (
                  <>
                    <span className="font-mono font-semibold">{item.slug}</span>
                    <span className="block truncate text-xs text-slate-700 dark:text-slate-300">{item.url}</span>
                  </>
                ) : (
                  "All links"
                )}
              </li>
            ))
          : null}
      </ul>
      <p className="sr-only" aria-live="polite">
        {isOpen ? status : ""}
      </p>
      <FieldErrors id={errId} errors={errors} />
      {choices}
    </div>
  );
}
