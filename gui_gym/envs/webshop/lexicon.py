"""The words the catalog generator writes with: product types, attribute wordings, options.

WebShop's products come from five Amazon categories (beauty, food, fashion, furniture,
electronics); each product has a narrow type (its ``query`` class, e.g. "shampoo") and a
breadcrumb ``product_category``. Goals name attributes mined from titles and bullet points
("sulfate free", "natural looking") and option values ("color: black", "size: large").

Here every type lists the phrases its titles are built from, how instructions name it, its
nouns (WebShop's type reward compares the *nouns* of titles, found there by spaCy; we know
them because we wrote the titles), the attributes a product of that type may have, and its
option groups. An attribute has one canonical wording (what goals and the reward use) and
paraphrases (what titles, bullet points and instructions may say instead), so that a search
for the instruction's words is not a string lookup.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "ATTRIBUTES",
    "CATEGORIES",
    "GENERIC_NOUNS",
    "PRODUCT_TYPES",
    "Attribute",
    "ProductType",
]

CATEGORIES = ("beauty", "food", "fashion", "furniture", "electronics")
"""WebShop's five broad categories, in this order everywhere."""


@dataclass(frozen=True, slots=True)
class Attribute:
    """A product property with its wordings.

    Attributes:
        name: The canonical wording: goals list it and the reward matches it.
        wordings: Other ways titles, bullet points and instructions say it.
        form: ``adj`` ("sulfate free shampoo"), ``for`` ("shampoo for dry hair") or
            ``with`` ("shampoo with argan oil"): how it joins a noun phrase.
    """

    name: str
    wordings: tuple[str, ...]
    form: str = "adj"

    @property
    def all_wordings(self) -> tuple[str, ...]:
        return (self.name, *self.wordings)


def _attrs(*specs: tuple[str, str, tuple[str, ...]]) -> dict[str, Attribute]:
    return {name: Attribute(name, wordings, form) for name, form, wordings in specs}


ATTRIBUTES: dict[str, Attribute] = _attrs(
    # beauty
    ("sulfate free", "adj", ("sulfate-free", "free of sulfates", "no sulfates")),
    ("paraben free", "adj", ("paraben-free", "without parabens", "no parabens")),
    ("cruelty free", "adj", ("cruelty-free", "not tested on animals", "vegan and cruelty-free")),
    (
        "natural ingredients",
        "with",
        ("all natural", "naturally derived ingredients", "plant based"),
    ),
    ("dry hair", "for", ("dry damaged hair", "dry and frizzy hair", "dehydrated hair")),
    ("color treated hair", "for", ("colored hair", "color-treated hair", "dyed hair")),
    ("argan oil", "with", ("moroccan argan oil", "infused with argan oil", "argan oil formula")),
    ("tea tree", "with", ("tea tree oil", "with tea tree", "tea-tree extract")),
    (
        "sensitive skin",
        "for",
        ("delicate skin", "easily irritated skin", "skin that reacts easily"),
    ),
    ("long lasting", "adj", ("long-lasting", "lasts all day", "24 hour wear")),
    ("fragrance free", "adj", ("fragrance-free", "unscented formula", "no added fragrance")),
    ("hyaluronic acid", "with", ("hyaluronic acid serum", "with hyaluronic acid", "hyaluronic")),
    ("spf 50", "with", ("spf50", "broad spectrum spf 50", "sun protection factor 50")),
    ("water resistant", "adj", ("water-resistant", "sweat resistant", "stays on in water")),
    ("natural looking", "adj", ("natural-looking", "looks natural", "blends with your own hair")),
    ("heat resistant", "adj", ("heat-resistant", "safe to curl and straighten", "heat friendly")),
    ("high quality", "adj", ("premium quality", "professional grade", "salon quality")),
    ("easy to use", "adj", ("easy to apply", "simple to use", "beginner friendly")),
    ("travel size", "adj", ("travel-size", "travel friendly", "carry-on size")),
    ("quick drying", "adj", ("quick-drying", "dries fast", "fast drying")),
    (
        "dermatologist tested",
        "adj",
        ("dermatologist-tested", "tested by dermatologists", "derm approved"),
    ),
    ("soft bristles", "with", ("soft bristle", "ultra soft bristles", "gentle bristles")),
    # food
    ("gluten free", "adj", ("gluten-free", "no gluten", "made without gluten")),
    ("non gmo", "adj", ("non-gmo", "no gmos", "non genetically modified")),
    ("sugar free", "adj", ("sugar-free", "no sugar added", "zero sugar")),
    ("low carb", "adj", ("low-carb", "keto friendly", "low in carbs")),
    ("high protein", "adj", ("high-protein", "packed with protein", "protein rich")),
    ("usda organic", "adj", ("certified organic", "organic", "usda certified organic")),
    (
        "individually wrapped",
        "adj",
        ("individually-wrapped", "single wrapped", "wrapped one by one"),
    ),
    ("kosher", "adj", ("certified kosher", "kosher certified", "ou kosher")),
    ("caffeine free", "adj", ("caffeine-free", "decaf", "no caffeine")),
    ("plant based", "adj", ("plant-based", "vegan", "made from plants")),
    ("dairy free", "adj", ("dairy-free", "no dairy", "lactose free")),
    ("ready to eat", "adj", ("ready-to-eat", "no cooking needed", "grab and go")),
    ("fair trade", "adj", ("fair-trade", "ethically sourced", "fairly traded")),
    ("whole bean", "adj", ("whole-bean", "beans not ground", "grind it yourself")),
    ("extra virgin", "adj", ("extra-virgin", "first cold pressed", "cold pressed")),
    (
        "no artificial flavors",
        "adj",
        ("no artificial flavor", "naturally flavored", "nothing artificial"),
    ),
    ("resealable bag", "with", ("resealable pouch", "zip top bag", "stay-fresh bag")),
    ("family size", "adj", ("family-size", "big family pack", "value size")),
    # fashion
    ("breathable", "adj", ("breathable fabric", "lets your skin breathe", "airy feel")),
    ("lightweight", "adj", ("light weight", "feather light", "barely there weight")),
    ("machine wash", "adj", ("machine washable", "machine-wash", "easy care")),
    ("relaxed fit", "adj", ("relaxed-fit", "loose fit", "roomy fit")),
    ("slim fit", "adj", ("slim-fit", "tailored fit", "fitted cut")),
    ("rubber sole", "with", ("rubber outsole", "non slip rubber sole", "grippy sole")),
    ("memory foam", "with", ("memory-foam", "cushioned insole", "foam footbed")),
    ("moisture wicking", "adj", ("moisture-wicking", "sweat wicking", "keeps you dry")),
    ("button closure", "with", ("button fly", "buttoned closure", "snap button")),
    ("elastic waist", "with", ("elastic waistband", "stretchy waist", "drawstring elastic waist")),
    ("cotton spandex", "adj", ("cotton and spandex", "stretch cotton", "cotton blend")),
    ("long sleeve", "adj", ("long-sleeve", "long sleeved", "full sleeve")),
    ("short sleeve", "adj", ("short-sleeve", "short sleeved", "tee sleeve")),
    ("polarized lenses", "with", ("polarized", "polarized lens", "anti glare lenses")),
    ("uv protection", "with", ("uv400 protection", "blocks uv rays", "100% uv protection")),
    ("daily wear", "for", ("everyday wear", "every day", "casual wear")),
    ("hand wash", "adj", ("hand washable", "hand-wash only", "wash by hand")),
    ("arch support", "with", ("supports your arches", "arch-support insole", "orthotic support")),
    ("faux fur", "with", ("faux-fur", "fake fur trim", "plush faux fur")),
    # furniture
    ("easy assembly", "adj", ("easy to assemble", "simple assembly", "quick setup")),
    ("solid wood", "adj", ("solid-wood", "real wood", "made of hardwood")),
    ("living room", "for", ("the living room", "family room", "lounge")),
    ("space saving", "adj", ("space-saving", "compact design", "fits small spaces")),
    ("storage space", "with", ("extra storage", "built-in storage", "storage compartment")),
    ("lumbar support", "with", ("lower back support", "ergonomic lumbar", "adjustable lumbar")),
    ("height adjustable", "adj", ("adjustable height", "height-adjustable", "raises and lowers")),
    ("metal frame", "with", ("steel frame", "sturdy metal frame", "iron frame")),
    ("mid century", "adj", ("mid-century", "mid century modern", "retro modern")),
    (
        "no tools required",
        "adj",
        ("tool-free assembly", "no tools needed", "assembles without tools"),
    ),
    ("bedroom", "for", ("the bedroom", "guest room", "kids room")),
    ("pu leather", "adj", ("faux leather", "pu-leather", "vegan leather")),
    ("non slip", "adj", ("non-slip", "anti slip feet", "skid resistant")),
    ("wood finish", "with", ("woodgrain finish", "wood grain", "wood look")),
    # electronics
    ("noise cancelling", "adj", ("noise-cancelling", "active noise cancellation", "anc")),
    ("fast charging", "adj", ("fast-charging", "quick charge", "rapid charging")),
    ("bluetooth 5.0", "with", ("bluetooth 5", "bt 5.0", "latest bluetooth")),
    ("usb c", "with", ("usb-c", "type c", "usb type-c")),
    (
        "long battery life",
        "with",
        ("all day battery", "extended battery life", "hours of playtime"),
    ),
    ("shockproof", "adj", ("shock-proof", "drop protection", "military grade drop tested")),
    ("high definition", "adj", ("hd", "high-definition", "crystal clear")),
    ("waterproof", "adj", ("water-proof", "ipx7 waterproof", "splash proof")),
    (
        "wireless charging",
        "with",
        ("qi wireless charging", "wireless charger compatible", "qi compatible"),
    ),
    ("4k", "with", ("4k ultra hd", "4k uhd", "2160p")),
    ("ergonomic design", "with", ("ergonomic", "comfortable grip", "contoured shape")),
    ("braided nylon", "adj", ("nylon braided", "braided cable", "tangle free nylon")),
    ("tempered glass", "adj", ("9h tempered glass", "tempered-glass", "hardened glass")),
    ("plug and play", "adj", ("plug-and-play", "no driver needed", "works out of the box")),
    ("built in microphone", "with", ("built-in mic", "built in mic", "integrated microphone")),
    ("portable", "adj", ("compact and portable", "lightweight portable", "pocket sized")),
)


@dataclass(frozen=True, slots=True)
class ProductType:
    """A narrow product type (WebShop's ``query`` class) and what its products look like.

    Attributes:
        key: The type's name, used as the product's ``query``.
        category: One of :data:`CATEGORIES`.
        path: The breadcrumb (``product_category`` joined with " › ").
        heads: Title head phrases ("Moisturizing Shampoo").
        goal_names: How instructions name the type ("shampoo", "hair wash").
        nouns: Nouns of the heads and goal names (for the type reward's title score).
        attributes: Canonical names of the attributes its products may have.
        options: Option groups: ``(name, values)``; a product offers a subset of each.
        price: ``(low, high)`` price range in dollars.
        plural: Instructions say "some {name}" or "a pair of {name}" rather than "a {name}".
        details: Short phrases bullet points and descriptions use about the type.
    """

    key: str
    category: str
    path: tuple[str, ...]
    heads: tuple[str, ...]
    goal_names: tuple[str, ...]
    nouns: tuple[str, ...]
    attributes: tuple[str, ...]
    options: tuple[tuple[str, tuple[str, ...]], ...]
    price: tuple[float, float]
    plural: str = ""
    details: tuple[str, ...] = ()

    @property
    def product_category(self) -> str:
        return " › ".join(self.path)


# Option value lists shared by several types. Every value survives WebShop's colour
# normalisation and fuzzy matching against itself (tests check it).
FASHION_COLORS = (
    "black",
    "white",
    "navy blue",
    "heather grey",
    "red",
    "beige",
    "olive green",
    "burgundy",
    "pink",
    "brown",
    "khaki",
    "light blue",
)
CLOTHING_SIZES = ("x-small", "small", "medium", "large", "x-large", "xx-large", "3x-large")
SHOE_SIZES = ("6", "6.5", "7", "7.5", "8", "8.5", "9", "9.5", "10", "10.5", "11", "12", "13")
WAIST_SIZES = ("28w x 30l", "30w x 30l", "32w x 32l", "34w x 32l", "36w x 32l", "38w x 34l")
BOTTLE_SIZES = ("3.4 fl oz", "8 fl oz", "12 fl oz", "16.9 fl oz", "33.8 fl oz")
SCENTS = ("lavender", "coconut", "eucalyptus", "citrus", "vanilla", "unscented", "peppermint")
PACKS = ("pack of 1", "pack of 2", "pack of 3", "pack of 4", "pack of 6", "pack of 12")
WOOD_COLORS = ("walnut", "espresso", "oak", "white", "black", "grey", "rustic brown", "natural")
DEVICE_COLORS = ("black", "white", "silver", "blue", "red", "green", "rose gold", "purple")
PHONE_MODELS = (
    "iphone 14",
    "iphone 14 pro",
    "iphone 15",
    "iphone 15 pro max",
    "galaxy s23",
    "galaxy s24 ultra",
    "pixel 8",
)
CABLE_LENGTHS = ("1 ft", "3 ft", "6 ft", "10 ft")

_GENERIC_NOUN_TEXT = """
    hair skin oil tree ingredients acid bristles brush set kit oz ounce ounces pack count
    bag bags box bottle jar can cup pound lb gram grams sauce flavor chocolate coffee tea nut
    nuts bar bars snack snacks chips jerky beef fruit honey beans bean bean seed seeds protein
    shoe shoes sneaker sneakers boot boots sole soles foam insole waist sleeve sleeves shirt
    tee jeans pants dress jacket coat socks sock sunglasses lenses lens frame hoodie sweatpants
    fur leather cotton spandex polyester women men kids girls boys
    chair chairs table tables desk shelf shelves bookshelf bookcase stool stools stand cabinet
    drawer drawers nightstand sofa couch loveseat ottoman rack bed wood metal steel storage
    room office home kitchen bedroom cushion seat back legs tier tiers inch inches ft feet
    earbuds headphones case cover cable cables charger speaker mouse keyboard protector glass
    battery power bank usb port ports bluetooth phone iphone galaxy pixel watch band bands
    microphone mic adapter hub laptop screen monitor camera
    shampoo conditioner moisturizer cream lotion lipstick lip polish nail nails extension
    extensions wig perfume parfum fragrance wash body sunscreen spf serum mask makeup
"""
GENERIC_NOUNS = frozenset(_GENERIC_NOUN_TEXT.split())
"""Nouns beyond each type's own, as spaCy would tag them in our titles."""


_CATEGORY_ATTRIBUTES = {
    "beauty": "cruelty free | paraben free | natural ingredients | long lasting | high quality | easy to use | travel size | dermatologist tested",
    "food": "non gmo | gluten free | kosher | usda organic | no artificial flavors | resealable bag | plant based | family size",
    "fashion": "machine wash | daily wear | high quality | hand wash | breathable | lightweight",
    "furniture": "easy assembly | metal frame | space saving | living room | storage space | wood finish | mid century | no tools required",
    "electronics": "portable | high quality | easy to use | plug and play | shockproof | waterproof | lightweight",
}
"""Attributes any product of a category may have, on top of its type's own: a type's pool is
large enough that few products share a goal's 2-4 attributes (WebShop's products carry many
mined attributes)."""


def _t(
    key: str,
    category: str,
    path: str,
    heads: str,
    goal_names: str,
    nouns: str,
    attributes: str,
    options: tuple[tuple[str, tuple[str, ...]], ...],
    price: tuple[float, float],
    plural: str = "",
    details: str = "",
) -> ProductType:
    return ProductType(
        key=key,
        category=category,
        path=tuple(p.strip() for p in path.split(">")),
        heads=tuple(h.strip() for h in heads.split("|")),
        goal_names=tuple(g.strip() for g in goal_names.split("|")),
        nouns=tuple(nouns.split()),
        attributes=tuple(
            dict.fromkeys(
                a.strip() for a in f"{attributes} | {_CATEGORY_ATTRIBUTES[category]}".split("|")
            )
        ),
        options=options,
        price=price,
        plural=plural,
        details=tuple(d.strip() for d in details.split("|")) if details else (),
    )


PRODUCT_TYPES: tuple[ProductType, ...] = (
    # ------------------------------------------------------------------------------ beauty
    _t(
        "shampoo",
        "beauty",
        "Beauty & Personal Care > Hair Care > Shampoo & Conditioner > Shampoos",
        "Shampoo | Moisturizing Shampoo | Clarifying Shampoo | Daily Shampoo",
        "shampoo | hair shampoo | hair wash | shampoo for my hair",
        "shampoo hair wash",
        "sulfate free | paraben free | natural ingredients | dry hair | color treated hair | argan oil | tea tree | cruelty free",
        (("size", BOTTLE_SIZES), ("scent", SCENTS)),
        (6.0, 38.0),
        details="cleanses the scalp | leaves hair soft and shiny | rich lather | rinses clean",
    ),
    _t(
        "conditioner",
        "beauty",
        "Beauty & Personal Care > Hair Care > Shampoo & Conditioner > Conditioners",
        "Conditioner | Deep Conditioner | Leave-In Conditioner | Hydrating Conditioner",
        "conditioner | hair conditioner | leave in conditioner | conditioner for my hair",
        "conditioner hair",
        "sulfate free | paraben free | dry hair | color treated hair | argan oil | natural ingredients | cruelty free | heat resistant",
        (("size", BOTTLE_SIZES), ("scent", SCENTS)),
        (7.0, 42.0),
        details="detangles knots | smooths frizz | softens every strand | adds shine",
    ),
    _t(
        "face moisturizer",
        "beauty",
        "Beauty & Personal Care > Skin Care > Face > Creams & Moisturizers",
        "Face Moisturizer | Facial Moisturizing Cream | Day Cream | Hydrating Face Lotion",
        "face moisturizer | moisturizing cream for my face | facial lotion | face cream",
        "face moisturizer cream lotion",
        "sensitive skin | fragrance free | hyaluronic acid | spf 50 | paraben free | cruelty free | natural ingredients | long lasting",
        (("size", ("1 oz", "1.7 oz", "2.5 oz", "3.4 oz")),),
        (9.0, 65.0),
        details="absorbs quickly | non greasy feel | hydrates for hours | smooths fine lines",
    ),
    _t(
        "lipstick",
        "beauty",
        "Beauty & Personal Care > Makeup > Lips > Lipstick",
        "Matte Lipstick | Liquid Lipstick | Lipstick | Satin Lip Color",
        "lipstick | lip color | matte lipstick | liquid lipstick",
        "lipstick lip color",
        "long lasting | water resistant | cruelty free | paraben free | natural ingredients | high quality | easy to use",
        (("color", ("ruby red", "nude", "berry", "coral", "mauve", "plum", "classic red")),),
        (4.0, 28.0),
        details="rich pigment | smooth glide | no feathering | comfortable on the lips",
    ),
    _t(
        "nail polish",
        "beauty",
        "Beauty & Personal Care > Foot, Hand & Nail Care > Nail Art & Polish > Nail Polish",
        "Nail Polish | Gel Nail Polish | Quick Dry Nail Lacquer | Nail Polish Set",
        "nail polish | gel polish | nail lacquer | polish for my nails",
        "nail polish lacquer set",
        "quick drying | long lasting | cruelty free | easy to use | high quality | travel size",
        (
            (
                "color",
                ("ruby red", "nude", "berry", "coral", "mauve", "glitter silver", "midnight blue"),
            ),
            ("size", ("0.5 fl oz", "6 piece set", "12 piece set")),
        ),
        (5.0, 30.0),
        details="chip resistant shine | glossy finish | even coverage | two coats for full color",
    ),
    _t(
        "hair extension",
        "beauty",
        "Beauty & Personal Care > Hair Care > Hair Extensions, Wigs & Accessories > Hair Extensions",
        "Clip in Hair Extensions | Hair Extension | Ponytail Extension | Seamless Hair Extensions",
        "hair extension | clip in hair extensions | clip-in extension | ponytail extension",
        "hair extension extensions ponytail clip",
        "natural looking | heat resistant | high quality | easy to use | long lasting",
        (
            (
                "color",
                (
                    "jet black",
                    "dark brown",
                    "chestnut",
                    "honey blonde",
                    "platinum blonde",
                    "auburn",
                ),
            ),
            ("length", ("14 inch", "18 inch", "22 inch", "26 inch")),
        ),
        (15.0, 90.0),
        details="blends in seconds | soft and tangle free | secure clips | thick from top to end",
    ),
    _t(
        "perfume",
        "beauty",
        "Beauty & Personal Care > Fragrance > Women's > Eau de Parfum",
        "Eau de Parfum | Perfume Spray | Eau de Toilette | Fragrance Mist",
        "perfume | eau de parfum | fragrance | perfume spray",
        "perfume parfum toilette fragrance mist spray",
        "long lasting | travel size | cruelty free | natural ingredients | high quality",
        (
            ("scent", ("floral", "woody", "fresh citrus", "vanilla musk", "oriental spice")),
            ("size", ("1 fl oz", "1.7 fl oz", "3.4 fl oz")),
        ),
        (18.0, 120.0),
        details="top notes of bergamot | warm base notes | elegant bottle | lingers through the day",
    ),
    _t(
        "makeup brush set",
        "beauty",
        "Beauty & Personal Care > Tools & Accessories > Makeup Brushes & Tools > Brush Sets",
        "Makeup Brush Set | Makeup Brushes | Foundation Brush Kit | Professional Brush Set",
        "makeup brush set | set of makeup brushes | brush kit for makeup | makeup brushes",
        "makeup brush brushes set kit",
        "soft bristles | cruelty free | high quality | travel size | easy to use",
        (
            ("color", ("rose gold", "black", "champagne", "pink marble")),
            ("size", ("5 piece", "10 piece", "16 piece")),
        ),
        (8.0, 45.0),
        details="blends powder and liquid | dense synthetic fibers | comes with a pouch | sturdy handles",
    ),
    # -------------------------------------------------------------------------------- food
    _t(
        "ground coffee",
        "food",
        "Grocery & Gourmet Food > Beverages > Coffee, Tea & Cocoa > Coffee > Ground Coffee",
        "Ground Coffee | Medium Roast Coffee | Dark Roast Ground Coffee | Coffee Grounds",
        "ground coffee | coffee | bag of coffee | dark roast coffee",
        "coffee roast grounds bag",
        "usda organic | fair trade | whole bean | caffeine free | kosher | non gmo",
        (
            (
                "flavor",
                (
                    "house blend",
                    "french roast",
                    "hazelnut",
                    "breakfast blend",
                    "colombian",
                    "mocha",
                ),
            ),
            ("size", ("12 ounce", "24 ounce", "2 pound")),
        ),
        (7.0, 32.0),
        details="smooth and balanced | notes of cocoa | roasted in small batches | great for drip brewers",
    ),
    _t(
        "green tea",
        "food",
        "Grocery & Gourmet Food > Beverages > Coffee, Tea & Cocoa > Tea > Green Tea",
        "Green Tea Bags | Green Tea | Matcha Green Tea | Jasmine Green Tea",
        "green tea | tea bags | green tea bags | box of green tea",
        "tea bags green matcha jasmine box",
        "usda organic | caffeine free | non gmo | kosher | fair trade | no artificial flavors",
        (
            ("flavor", ("original", "jasmine", "mint", "lemon ginger", "honey")),
            ("size", ("20 count", "40 count", "100 count")),
        ),
        (4.0, 24.0),
        details="light grassy taste | steep for three minutes | rich in antioxidants | enjoy hot or iced",
    ),
    _t(
        "protein bar",
        "food",
        "Grocery & Gourmet Food > Snack Foods > Bars > Protein Bars",
        "Protein Bars | Protein Bar | Snack Bars | Energy Protein Bars",
        "protein bars | protein bar | snack bars with protein | bars",
        "protein bar bars snack",
        "high protein | gluten free | low carb | individually wrapped | non gmo | plant based | sugar free",
        (
            (
                "flavor",
                (
                    "chocolate chip",
                    "peanut butter",
                    "cookies and cream",
                    "birthday cake",
                    "salted caramel",
                ),
            ),
            ("size", PACKS),
        ),
        (9.0, 45.0),
        details="chewy texture | fuel after a workout | great on the go | no chalky taste",
    ),
    _t(
        "potato chips",
        "food",
        "Grocery & Gourmet Food > Snack Foods > Chips & Crisps > Potato Chips",
        "Kettle Cooked Potato Chips | Potato Chips | Crinkle Cut Chips | Thin Potato Crisps",
        "potato chips | chips | bag of chips | kettle chips",
        "potato chips crisps bag",
        "gluten free | non gmo | kosher | individually wrapped | no artificial flavors | resealable bag",
        (
            (
                "flavor",
                ("sea salt", "barbecue", "salt and vinegar", "jalapeno", "sour cream and onion"),
            ),
            ("size", PACKS),
        ),
        (3.0, 28.0),
        details="extra crunchy | cooked in small batches | perfect for lunch boxes | bold seasoning",
    ),
    _t(
        "olive oil",
        "food",
        "Grocery & Gourmet Food > Pantry Staples > Cooking & Baking > Oils > Olive Oil",
        "Extra Virgin Olive Oil | Olive Oil | Cold Pressed Olive Oil | Cooking Olive Oil",
        "olive oil | extra virgin olive oil | bottle of olive oil | cooking oil",
        "olive oil bottle",
        "extra virgin | usda organic | non gmo | kosher | gluten free",
        (("size", ("16.9 fl oz", "25.4 fl oz", "33.8 fl oz", "68 fl oz")),),
        (8.0, 40.0),
        details="peppery finish | for salads and sauteing | harvested early | dark glass bottle",
    ),
    _t(
        "dark chocolate",
        "food",
        "Grocery & Gourmet Food > Candy & Chocolate > Chocolate > Chocolate Bars",
        "Dark Chocolate Bar | Dark Chocolate | Chocolate Squares | Dark Chocolate Bars",
        "dark chocolate | chocolate bar | dark chocolate bars | chocolate",
        "chocolate bar bars squares",
        "sugar free | fair trade | usda organic | dairy free | gluten free | non gmo | plant based | individually wrapped",
        (
            ("flavor", ("70% cacao", "85% cacao", "sea salt almond", "orange", "raspberry")),
            ("size", PACKS),
        ),
        (4.0, 35.0),
        details="deep cocoa flavor | snaps cleanly | melts smoothly | a treat after dinner",
    ),
    _t(
        "beef jerky",
        "food",
        "Grocery & Gourmet Food > Meat & Seafood > Jerky & Dried Meats > Beef Jerky",
        "Beef Jerky | Original Beef Jerky | Jerky Sticks | Tender Beef Jerky",
        "beef jerky | jerky | meat snack | dried beef",
        "beef jerky sticks meat snack",
        "high protein | low carb | gluten free | no artificial flavors | resealable bag | ready to eat",
        (
            ("flavor", ("original", "teriyaki", "cracked pepper", "sweet and hot", "smoked")),
            ("size", ("2.85 ounce", "10 ounce", "pack of 4")),
        ),
        (6.0, 40.0),
        details="slow smoked | tender bite | savory marinade | protein for the trail",
    ),
    _t(
        "mixed nuts",
        "food",
        "Grocery & Gourmet Food > Snack Foods > Nuts & Seeds > Mixed Nuts",
        "Mixed Nuts | Roasted Mixed Nuts | Trail Mix | Deluxe Nut Mix",
        "mixed nuts | nuts | trail mix | nut mix",
        "nuts nut mix trail",
        "non gmo | kosher | gluten free | plant based | individually wrapped | resealable bag | low carb",
        (
            ("flavor", ("lightly salted", "unsalted", "honey roasted", "sea salt", "smoked")),
            ("size", ("8 ounce", "16 ounce", "2 pound", "pack of 6")),
        ),
        (6.0, 36.0),
        details="cashews almonds and pecans | roasted to order | crunchy snack | great for parties",
    ),
    # ----------------------------------------------------------------------------- fashion
    _t(
        "running shoes",
        "fashion",
        "Clothing, Shoes & Jewelry > Women > Shoes > Athletic > Running",
        "Running Shoes | Lightweight Sneakers | Road Running Shoe | Athletic Sneakers",
        "running shoes | sneakers | shoes for running | athletic shoes",
        "shoes shoe sneakers running",
        "rubber sole | memory foam | arch support | machine wash | daily wear | moisture wicking",
        (("color", FASHION_COLORS), ("size", SHOE_SIZES)),
        (25.0, 140.0),
        plural="a pair of",
        details="breathable mesh upper | springy midsole | secure lace up fit | light on your feet",
    ),
    _t(
        "t-shirt",
        "fashion",
        "Clothing, Shoes & Jewelry > Men > Clothing > Shirts > T-Shirts",
        "T-Shirt | Crew Neck Tee | Graphic T-Shirt | Cotton Tee Shirt",
        "t-shirt | tee shirt | tee | crew neck t-shirt",
        "shirt tee neck",
        "short sleeve | long sleeve | machine wash | cotton spandex | relaxed fit | slim fit | daily wear | moisture wicking",
        (("color", FASHION_COLORS), ("size", CLOTHING_SIZES)),
        (8.0, 35.0),
        details="soft jersey knit | tag free collar | holds its shape | layer it or wear it alone",
    ),
    _t(
        "jeans",
        "fashion",
        "Clothing, Shoes & Jewelry > Men > Clothing > Jeans",
        "Jeans | Straight Leg Jeans | Denim Jeans | Stretch Jeans",
        "jeans | denim jeans | pants made of denim | straight leg jeans",
        "jeans denim leg",
        "relaxed fit | slim fit | button closure | machine wash | cotton spandex | daily wear",
        (
            ("color", ("dark wash", "light wash", "black", "medium stonewash", "rinse")),
            ("size", WAIST_SIZES),
        ),
        (20.0, 80.0),
        plural="a pair of",
        details="five pocket styling | sits at the waist | comfortable stretch | classic denim look",
    ),
    _t(
        "dress",
        "fashion",
        "Clothing, Shoes & Jewelry > Women > Clothing > Dresses > Casual",
        "Summer Dress | Maxi Dress | Casual Dress | Wrap Dress",
        "dress | summer dress | maxi dress | casual dress",
        "dress maxi wrap",
        "short sleeve | long sleeve | elastic waist | machine wash | hand wash | daily wear | relaxed fit",
        (("color", FASHION_COLORS), ("size", CLOTHING_SIZES)),
        (18.0, 70.0),
        details="flowy skirt | flattering v neck | side pockets | dress it up or down",
    ),
    _t(
        "winter jacket",
        "fashion",
        "Clothing, Shoes & Jewelry > Women > Clothing > Coats, Jackets & Vests > Down & Parkas",
        "Winter Jacket | Puffer Jacket | Hooded Parka | Insulated Coat",
        "winter jacket | puffer jacket | warm coat | parka",
        "jacket coat parka puffer",
        "faux fur | water resistant | machine wash | long sleeve | relaxed fit | button closure",
        (("color", FASHION_COLORS), ("size", CLOTHING_SIZES)),
        (40.0, 180.0),
        details="warm synthetic fill | detachable hood | zip pockets | windproof shell",
    ),
    _t(
        "sweatpants",
        "fashion",
        "Clothing, Shoes & Jewelry > Men > Clothing > Active > Active Pants > Sweatpants",
        "Sweatpants | Jogger Sweatpants | Workout Joggers | Fleece Sweatpants",
        "sweatpants | joggers | workout sweatpants | jogger pants",
        "sweatpants joggers pants fleece",
        "elastic waist | relaxed fit | moisture wicking | machine wash | cotton spandex | daily wear",
        (("color", FASHION_COLORS), ("size", CLOTHING_SIZES)),
        (15.0, 55.0),
        plural="a pair of",
        details="soft brushed fleece | tapered ankle cuffs | deep pockets | made for lounging",
    ),
    _t(
        "socks",
        "fashion",
        "Clothing, Shoes & Jewelry > Men > Clothing > Socks > Athletic Socks",
        "Athletic Socks | Crew Socks | Ankle Socks | Cushioned Socks",
        "socks | athletic socks | crew socks | ankle socks",
        "socks sock crew ankle",
        "moisture wicking | arch support | machine wash | cotton spandex | daily wear",
        (
            ("color", ("black", "white", "heather grey", "assorted colors")),
            ("size", ("pack of 6", "pack of 12", "pack of 3")),
        ),
        (8.0, 30.0),
        plural="some",
        details="cushioned heel and toe | stays up all day | breathable knit | reinforced seams",
    ),
    _t(
        "sunglasses",
        "fashion",
        "Clothing, Shoes & Jewelry > Men > Accessories > Sunglasses & Eyewear Accessories > Sunglasses",
        "Polarized Sunglasses | Sunglasses | Aviator Sunglasses | Retro Sunglasses",
        "sunglasses | shades | aviator sunglasses | sunglasses for driving",
        "sunglasses shades aviator",
        "polarized lenses | uv protection | high quality | daily wear | portable",
        (("color", ("black frame", "gold frame", "tortoise", "silver mirror", "blue mirror")),),
        (10.0, 90.0),
        plural="a pair of",
        details="light metal frame | spring hinges | comes with a case | cuts glare on the road",
    ),
    # --------------------------------------------------------------------------- furniture
    _t(
        "office chair",
        "furniture",
        "Home & Kitchen > Furniture > Home Office Furniture > Home Office Chairs > Desk Chairs",
        "Office Chair | Ergonomic Desk Chair | Mesh Office Chair | Computer Chair",
        "office chair | desk chair | computer chair | chair for my office",
        "chair office desk computer",
        "lumbar support | height adjustable | easy assembly | pu leather | metal frame | ergonomic design",
        (("color", ("black", "grey", "white", "blue", "pink")),),
        (60.0, 320.0),
        details="smooth rolling casters | 360 degree swivel | padded armrests | supports up to 275 lbs",
    ),
    _t(
        "bookshelf",
        "furniture",
        "Home & Kitchen > Furniture > Home Office Furniture > Bookcases",
        "Bookshelf | Bookcase | Open Shelf Bookcase | Ladder Shelf",
        "bookshelf | bookcase | shelf for books | book shelf",
        "bookshelf bookcase shelf shelves ladder",
        "easy assembly | solid wood | metal frame | storage space | space saving | living room | wood finish",
        (("color", WOOD_COLORS), ("size", ("3-tier", "4-tier", "5-tier"))),
        (35.0, 220.0),
        details="holds books and plants | anti tip kit included | sturdy shelves | industrial look",
    ),
    _t(
        "coffee table",
        "furniture",
        "Home & Kitchen > Furniture > Living Room Furniture > Tables > Coffee Tables",
        "Coffee Table | Lift Top Coffee Table | Round Coffee Table | Cocktail Table",
        "coffee table | table for the living room | cocktail table | center table",
        "table coffee cocktail center",
        "living room | storage space | solid wood | mid century | easy assembly | metal frame | wood finish",
        (("color", WOOD_COLORS),),
        (50.0, 280.0),
        details="hidden compartment | rounded corners | scratch resistant top | fits any decor",
    ),
    _t(
        "bar stool",
        "furniture",
        "Home & Kitchen > Furniture > Game & Recreation Room Furniture > Home Bar Furniture > Barstools",
        "Bar Stools | Counter Height Stool | Swivel Bar Stool | Barstool Set",
        "bar stools | counter stools | stools for my kitchen island | barstool",
        "stool stools barstool counter bar",
        "height adjustable | pu leather | metal frame | mid century | non slip | easy assembly",
        (
            ("color", ("black", "grey", "white", "brown", "green")),
            ("size", ("set of 2", "set of 4")),
        ),
        (45.0, 260.0),
        details="footrest for comfort | padded seat | swivels smoothly | protects your floors",
    ),
    _t(
        "nightstand",
        "furniture",
        "Home & Kitchen > Furniture > Bedroom Furniture > Nightstands",
        "Nightstand | Bedside Table | End Table with Drawer | Night Stand",
        "nightstand | bedside table | night stand | table next to my bed",
        "nightstand table drawer stand",
        "bedroom | storage space | solid wood | easy assembly | mid century | space saving | wood finish",
        (("color", WOOD_COLORS),),
        (30.0, 180.0),
        details="smooth gliding drawer | open shelf below | charging station | compact footprint",
    ),
    _t(
        "loveseat",
        "furniture",
        "Home & Kitchen > Furniture > Living Room Furniture > Sofas & Couches",
        "Loveseat Sofa | Small Couch | Loveseat | Velvet Sofa",
        "loveseat | small sofa | couch | sofa for two",
        "loveseat sofa couch",
        "living room | mid century | easy assembly | pu leather | solid wood | space saving | no tools required",
        (("color", ("grey", "navy blue", "beige", "green", "dark brown", "cream white")),),
        (150.0, 700.0),
        details="deep seat cushions | removable covers | sturdy legs | seats two adults",
    ),
    _t(
        "tv stand",
        "furniture",
        "Home & Kitchen > Furniture > Living Room Furniture > Television Stands & Entertainment Centers",
        "TV Stand | Entertainment Center | TV Console | Media Cabinet",
        "tv stand | tv console | entertainment center | media stand",
        "stand tv console center cabinet",
        "living room | storage space | easy assembly | wood finish | metal frame | mid century",
        (("color", WOOD_COLORS), ("size", ("55 inch", "65 inch", "75 inch"))),
        (60.0, 300.0),
        details="cable management holes | adjustable shelves | holds consoles and speakers | sliding doors",
    ),
    _t(
        "shoe rack",
        "furniture",
        "Home & Kitchen > Storage & Organization > Clothing & Closet Storage > Shoe Organizers",
        "Shoe Rack | Shoe Organizer | Stackable Shoe Shelf | Entryway Shoe Rack",
        "shoe rack | shoe organizer | rack for my shoes | shoe shelf",
        "shoe rack organizer shelf",
        "space saving | no tools required | metal frame | easy assembly | storage space | non slip",
        (
            ("color", ("black", "white", "bronze", "natural")),
            ("size", ("3-tier", "4-tier", "5-tier", "10-tier")),
        ),
        (15.0, 90.0),
        details="holds up to 20 pairs | fits closets and entryways | stackable design | airflow between shelves",
    ),
    # ------------------------------------------------------------------------- electronics
    _t(
        "wireless earbuds",
        "electronics",
        "Electronics > Headphones, Earbuds & Accessories > Headphones & Earbuds > Earbud Headphones",
        "Wireless Earbuds | Bluetooth Earbuds | True Wireless Earphones | Sport Earbuds",
        "wireless earbuds | bluetooth earbuds | earphones | earbuds",
        "earbuds earphones headphones",
        "noise cancelling | bluetooth 5.0 | long battery life | waterproof | built in microphone | fast charging | wireless charging",
        (("color", DEVICE_COLORS),),
        (18.0, 160.0),
        plural="a pair of",
        details="charging case included | touch controls | stable connection | secure fit for workouts",
    ),
    _t(
        "phone case",
        "electronics",
        "Cell Phones & Accessories > Cases, Holsters & Sleeves > Basic Cases",
        "Phone Case | Clear Case | Protective Phone Cover | Slim Case",
        "phone case | protective case | phone cover | case for my phone",
        "case phone cover",
        "shockproof | wireless charging | high quality | waterproof | portable",
        (("color", DEVICE_COLORS), ("style", PHONE_MODELS)),
        (6.0, 40.0),
        details="raised edges protect the screen | precise cutouts | grippy sides | slim profile",
    ),
    _t(
        "usb c cable",
        "electronics",
        "Electronics > Computers & Accessories > Cables & Accessories > Cables & Interconnects > USB Cables",
        "USB C Cable | Charging Cable | USB-C to USB-C Cable | Fast Charger Cord",
        "usb c cable | charging cable | usb-c cord | charger cable",
        "cable cord charger usb",
        "fast charging | braided nylon | usb c | high quality | plug and play",
        (("length", CABLE_LENGTHS), ("size", PACKS)),
        (5.0, 30.0),
        details="60w power delivery | 480mbps data transfer | reinforced joints | works with laptops and phones",
    ),
    _t(
        "bluetooth speaker",
        "electronics",
        "Electronics > Portable Audio & Video > Portable Speakers & Docks > Portable Bluetooth Speakers",
        "Bluetooth Speaker | Portable Speaker | Wireless Speaker | Outdoor Speaker",
        "bluetooth speaker | portable speaker | wireless speaker | speaker",
        "speaker",
        "waterproof | long battery life | portable | bluetooth 5.0 | built in microphone",
        (("color", DEVICE_COLORS),),
        (20.0, 150.0),
        details="deep bass | 360 degree sound | pair two speakers | built for the beach",
    ),
    _t(
        "hdmi cable",
        "electronics",
        "Electronics > Television & Video > Accessories > Cables > HDMI Cables",
        "HDMI Cable | High Speed HDMI Cord | 8K HDMI Cable | HDMI 2.1 Cable",
        "hdmi cable | hdmi cord | cable for my tv | high speed hdmi",
        "cable cord hdmi",
        "4k | high definition | braided nylon | plug and play | high quality",
        (("length", CABLE_LENGTHS), ("size", PACKS)),
        (6.0, 35.0),
        details="supports 120hz | gold plated connectors | for tvs and game consoles | arc support",
    ),
    _t(
        "power bank",
        "electronics",
        "Cell Phones & Accessories > Chargers & Power Adapters > Portable Power Banks",
        "Power Bank | Portable Charger | Battery Pack | Magnetic Power Bank",
        "power bank | portable charger | battery pack | phone charger to carry",
        "bank charger battery pack",
        "fast charging | portable | usb c | wireless charging | long battery life",
        (("color", DEVICE_COLORS), ("capacity", ("5000mah", "10000mah", "20000mah", "26800mah"))),
        (15.0, 90.0),
        details="charges two devices at once | led power display | slim enough for a pocket | airline safe",
    ),
    _t(
        "wireless mouse",
        "electronics",
        "Electronics > Computers & Accessories > Computer Accessories & Peripherals > Keyboards, Mice & Accessories > Mice",
        "Wireless Mouse | Bluetooth Mouse | Silent Computer Mouse | Ergonomic Mouse",
        "wireless mouse | computer mouse | bluetooth mouse | mouse for my laptop",
        "mouse computer",
        "ergonomic design | plug and play | long battery life | bluetooth 5.0 | portable | usb c",
        (("color", DEVICE_COLORS),),
        (8.0, 70.0),
        details="silent clicks | adjustable dpi | nano receiver | works on most surfaces",
    ),
    _t(
        "screen protector",
        "electronics",
        "Cell Phones & Accessories > Accessories > Screen Protectors",
        "Screen Protector | Tempered Glass Screen Protector | Privacy Screen Protector | Glass Protector",
        "screen protector | glass screen protector | protector for my phone screen | screen guard",
        "protector screen guard glass",
        "tempered glass | high definition | easy to use | shockproof",
        (("style", PHONE_MODELS), ("size", ("pack of 2", "pack of 3"))),
        (5.0, 25.0),
        details="bubble free install | keeps touch sensitive | case friendly | alignment frame included",
    ),
)
"""Every product type: eight per category."""

TYPE_BY_KEY: dict[str, ProductType] = {t.key: t for t in PRODUCT_TYPES}
