// What other resources may use of reports: nothing yet. Their files import reports only through here.
export {};
