"""The attack suite of issue 22: hostile copies of the demo repo run through tipc's CLI."""
