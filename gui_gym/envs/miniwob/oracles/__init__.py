"""Scripted experts for MiniWoB++ tasks, driven only through gui-gym's action API, and the
one table that maps each task to its expert.

Each expert reads what an agent reads (the utterance and its fields as miniwob extracts them,
the current ``UITree``, and the last action) and returns the next
:class:`~gui_gym.core.actions.Action`. They prove the DOM -> UITree and action -> miniwob
mappings end to end: a test runs each over several seeds and expects miniwob's raw reward of
1.0, and replays the same miniwob actions on a raw ``miniwob`` env to compare rewards.

The experts live by kind of page (the package is ``gui_gym.envs.miniwob.oracles``):

* ``basic``: buttons, text fields, logins, checkboxes, tables, forms, arithmetic;
* ``widgets``: menus, tabs, lists and trees, date and time pickers, autocompletes, the
  e-mail and social-media apps, booking forms, drags;
* ``games``: sliders, form sequences, number games, a terminal, tic-tac-toe, timing;
* ``shapes``: colours and shapes read from the UI tree;
* ``forms``: pages that need a person's knowledge (synonyms, airports, a calendar, icons);
* ``visual``: pages read from the screenshot;
* ``common``: what they share (finding elements, clicking, filling and submitting).
"""

from __future__ import annotations

from gui_gym.envs.miniwob.oracles import basic, forms, games, shapes, visual, widgets
from gui_gym.envs.miniwob.oracles.common import Expert, OracleStuck

__all__ = ["ORACLES", "UNSCRIPTED", "Expert", "OracleStuck"]

ORACLES: dict[str, Expert] = {
    "click-test": basic.click_test,
    "click-test-2": basic.click_target_button,
    "click-test-transfer": basic.click_target_button,
    "click-button": basic.click_target_button,
    "unicode-test": basic.click_target_button,
    "click-link": basic.click_link,
    "click-dialog": basic.click_dialog,
    "click-dialog-2": basic.click_dialog_2,
    "click-tab": basic.click_tab,
    "click-button-sequence": basic.click_button_sequence,
    "click-widget": basic.click_widget,
    "click-collapsible": basic.click_collapsible,
    "click-checkboxes": basic.click_checkboxes,
    "click-checkboxes-large": basic.click_checkboxes,
    "click-checkboxes-transfer": basic.click_checkboxes,
    "click-option": basic.click_option,
    "focus-text": basic.focus_text,
    "focus-text-2": basic.focus_text_2,
    "enter-text": basic.enter_text,
    "enter-text-dynamic": basic.enter_text,
    "enter-text-2": basic.enter_text_2,
    "enter-password": basic.enter_password,
    "login-user": basic.login_user,
    "read-table": basic.read_table,
    "read-table-2": basic.read_table_2,
    "multi-orderings": basic.multi_form,
    "multi-layouts": basic.multi_form,
    "copy-paste": basic.copy_paste,
    "text-transform": basic.text_transform,
    "find-word": basic.find_word,
    "simple-arithmetic": basic.simple_arithmetic,
    "simple-algebra": basic.simple_algebra,
    "click-collapsible-nodelay": basic.click_collapsible,
    "click-collapsible-2": widgets.click_collapsible_2,
    "click-collapsible-2-nodelay": widgets.click_collapsible_2,
    "click-tab-2": widgets.click_tab_2,
    "click-tab-2-easy": widgets.click_tab_2,
    "click-tab-2-medium": widgets.click_tab_2,
    "click-tab-2-hard": widgets.click_tab_2,
    "choose-list": widgets.choose_list,
    "click-menu": widgets.click_menu,
    "click-menu-2": forms.click_menu_2,
    "navigate-tree": widgets.navigate_tree,
    "login-user-popup": widgets.login_user_popup,
    "enter-date": widgets.enter_date,
    "enter-time": widgets.enter_time,
    "guess-number": widgets.guess_number,
    "highlight-text": widgets.highlight_text,
    "highlight-text-2": widgets.highlight_text,
    "scroll-text": widgets.scroll_text,
    "scroll-text-2": widgets.scroll_text_2,
    "copy-paste-2": widgets.copy_paste_2,
    "grid-coordinate": widgets.grid_coordinate,
    "visual-addition": widgets.visual_addition,
    "use-spinner": widgets.use_spinner,
    "use-autocomplete": widgets.use_autocomplete,
    "use-autocomplete-nodelay": widgets.use_autocomplete,
    "email-inbox": widgets.email_inbox,
    "email-inbox-delete": widgets.email_inbox,
    "email-inbox-forward": widgets.email_inbox,
    "email-inbox-forward-nl": widgets.email_inbox,
    "email-inbox-forward-nl-turk": widgets.email_inbox,
    "email-inbox-important": widgets.email_inbox,
    "email-inbox-nl-turk": widgets.email_inbox,
    "email-inbox-noscroll": widgets.email_inbox,
    "email-inbox-reply": widgets.email_inbox,
    "email-inbox-star-reply": widgets.email_inbox,
    "social-media": widgets.social_media,
    "social-media-all": widgets.social_media_all,
    "social-media-some": widgets.social_media_all,
    "ascending-numbers": games.ascending_numbers,
    "use-slider": games.use_slider,
    "use-slider-2": games.use_slider_2,
    "form-sequence": games.form_sequence,
    "form-sequence-2": games.form_sequence_2,
    "generate-number": games.generate_number,
    "odd-or-even": games.odd_or_even,
    "search-engine": games.search_engine,
    "terminal": games.terminal,
    "tic-tac-toe": games.tic_tac_toe,
    "choose-date": widgets.choose_date,
    "choose-date-easy": widgets.choose_date,
    "choose-date-medium": widgets.choose_date,
    "choose-date-nodelay": widgets.choose_date,
    "phone-book": widgets.phone_book,
    "sign-agreement": widgets.sign_agreement,
    "buy-ticket": widgets.buy_ticket,
    "form-sequence-3": widgets.form_sequence_3,
    "drag-circle": widgets.drag_in_direction,
    "drag-single-shape": widgets.drag_in_direction,
    "resize-textarea": widgets.resize_textarea,
    "drag-items": widgets.drag_items,
    "drag-sort-numbers": widgets.drag_sort_numbers,
    "click-color": shapes.click_color,
    "click-shades": shapes.click_shades,
    "identify-shape": shapes.identify_shape,
    "draw-line": shapes.draw_line,
    "click-pie": shapes.click_pie,
    "click-pie-nodelay": shapes.click_pie,
    "drag-box": shapes.drag_box,
    "drag-shapes": shapes.drag_shapes,
    "find-greatest": shapes.find_greatest,
    "click-shape": shapes.click_shape,
    "count-shape": shapes.count_shape,
    "drag-shapes-2": shapes.drag_shapes_2,
    "stock-market": games.stock_market,
    "book-flight": widgets.book_flight,
    "book-flight-nodelay": widgets.book_flight,
    "use-colorwheel": shapes.use_colorwheel,
    "number-checkboxes": shapes.number_checkboxes,
    "hot-cold": games.hot_cold,
    "circle-center": visual.circle_center,
    "find-midpoint": visual.find_midpoint,
    "right-angle": visual.right_angle,
    "bisect-angle": visual.bisect_angle,
    "drag-cube": visual.drag_cube,
    "draw-circle": visual.draw_circle,
    "count-sides": visual.count_sides,
    "use-colorwheel-2": visual.use_colorwheel_2,
    "order-food": visual.order_food,
    "drag-items-grid": visual.drag_items_grid,
    "click-checkboxes-soft": forms.click_checkboxes_soft,
    "click-scroll-list": forms.click_scroll_list,
    "text-editor": forms.text_editor,
    "flight.Alaska": forms.flight_alaska,
    "flight.Alaska-auto": forms.flight_alaska,
    "flight.AA": forms.flight_aa,
    "daily-calendar": forms.daily_calendar,
}
"""Task name -> expert: every MiniWoB++ task has one."""

UNSCRIPTED: dict[str, str] = {}
"""MiniWoB++ tasks without an expert, and why (docs/miniwob.md lists the experts below 90%)."""
